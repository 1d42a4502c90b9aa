import { ToolError } from "../../core/errors.js";
import type { ContentBlock } from "../../core/result.js";

/**
 * Images for the model: passed through when within the model's limits, otherwise scaled down (and, if
 * still too large, re-encoded as JPEG) until they fit. sharp is loaded only when an image is read.
 */

/** Largest base64 payload the model accepts for one image. */
const MAX_IMAGE_BASE64_BYTES = 5 * 1024 * 1024;
/** Largest width or height the model accepts. */
const MAX_IMAGE_DIMENSION = 8000;
/** Each further attempt scales the image by this factor. */
const SHRINK_STEP = 0.75;
const JPEG_QUALITY = 80;
const MAX_SHRINK_ATTEMPTS = 8;

export type ImageMediaType = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

const base64Length = (bytes: number) => 4 * Math.ceil(bytes / 3);

export interface ShownImage {
  blocks: ContentBlock[];
  /** Said when the image was changed to fit. */
  note?: string;
}

/** Side of the thumbnail decoded to prove an image is whole; decoding reads every pixel row. */
const PROBE_SIZE = 1;

/**
 * Decodes the whole image (into a 1-pixel thumbnail) so a truncated or corrupt file is refused here: an
 * image the model's API cannot decode would fail the whole conversation, not just this call.
 */
async function requireDecodable(path: string, bytes: Buffer, mediaType: ImageMediaType): Promise<void> {
  const { default: sharp } = await import("sharp");
  try {
    await sharp(bytes).resize(PROBE_SIZE, PROBE_SIZE, { fit: "fill" }).raw().toBuffer();
  } catch (error) {
    const reason = (error as Error).message.split("\n")[0]!.replace(/[\s:]+$/, "");
    const format = mediaType.slice("image/".length).toUpperCase();
    throw new ToolError(
      `${path} has the header of a ${format} image but cannot be decoded (${reason}): it is probably truncated or corrupt. ` +
        "Check it with Bash (file, or ls -l for its size), or regenerate it.",
    );
  }
}

export async function imageForModel(
  path: string,
  bytes: Buffer,
  mediaType: ImageMediaType,
): Promise<ShownImage> {
  await requireDecodable(path, bytes, mediaType);
  const { default: sharp } = await import("sharp");
  const meta = await sharp(bytes).metadata();
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  const fits =
    base64Length(bytes.length) <= MAX_IMAGE_BASE64_BYTES && Math.max(width, height) <= MAX_IMAGE_DIMENSION;
  if (fits) return { blocks: [{ type: "image", data: bytes.toString("base64"), mimeType: mediaType }] };

  let scale = Math.min(1, MAX_IMAGE_DIMENSION / Math.max(width, height, 1));
  let out: { data: Buffer; info: { width: number; height: number } } | undefined;
  let outType: ImageMediaType = mediaType === "image/png" ? "image/png" : "image/jpeg";
  for (let attempt = 0; attempt < MAX_SHRINK_ATTEMPTS; attempt++) {
    const resized = sharp(bytes).resize({
      width: Math.max(1, Math.round(width * scale)),
      height: Math.max(1, Math.round(height * scale)),
      fit: "inside",
    });
    out = await (outType === "image/png"
      ? resized.png({ compressionLevel: 9 })
      : resized.jpeg({ quality: JPEG_QUALITY })
    ).toBuffer({
      resolveWithObject: true,
    });
    if (base64Length(out.data.length) <= MAX_IMAGE_BASE64_BYTES) break;
    // PNG that is still too big at full size is usually a photo: JPEG shrinks it far more than scaling.
    if (outType === "image/png") outType = "image/jpeg";
    else scale *= SHRINK_STEP;
  }
  const data = out!.data;
  const note =
    `The image (${width}x${height}, ${bytes.length} bytes) exceeded the model's limits ` +
    `(${MAX_IMAGE_DIMENSION} px, ${MAX_IMAGE_BASE64_BYTES / 1024 / 1024} MB) and is shown scaled to ` +
    `${out!.info.width}x${out!.info.height} (${data.length} bytes, ${outType}).`;
  return { blocks: [{ type: "image", data: data.toString("base64"), mimeType: outType }], note };
}
