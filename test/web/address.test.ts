import { describe, expect, it } from "vitest";
import { ToolResult } from "../../src/core/result.js";
import { runTool } from "../../src/executor/run.js";
import { isPublicAddress, type Resolver } from "../../src/web/address.js";
import { runWebFetch } from "../../src/web/run-webfetch.js";
import { allow, callContext, webContext } from "./helpers.js";
import { routes, serve } from "./servers.js";

async function fetchWith(ctx: ReturnType<typeof webContext>, url: string) {
  const result = await runTool("WebFetch", { url, prompt: "" }, ctx);
  return { result, text: ToolResult.text(result) };
}

describe("address checks", () => {
  it("counts only public unicast addresses as public", () => {
    for (const address of ["8.8.8.8", "93.184.216.34", "2606:4700::1111"])
      expect(isPublicAddress(address), address).toBe(true);
    for (const address of [
      "127.0.0.1",
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fe80::1",
      "fd00::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "64:ff9b::7f00:1",
      "224.0.0.1",
      "not an address",
    ]) {
      expect(isPublicAddress(address), address).toBe(false);
    }
  });

  it("denies loopback, private and link-local hosts unless an allow rule names the host", async () => {
    const site = await serve(routes({ "/": { body: "<p>internal page</p>" } }));
    const url = `${site.origin}/`;
    const none = await fetchWith(webContext(), url);
    expect(none.result.isError).toBe(true);
    expect(none.text).toMatch(
      /127\.0\.0\.1 is a loopback address\. .* add the rule WebFetch\(domain:127\.0\.0\.1\)/,
    );
    // Every host, or WebFetch itself, is the public web: not the machines behind it.
    for (const rules of [allow("WebFetch(domain:*)"), allow("WebFetch"), allow("WebFetch(domain:*.0.0.1)")]) {
      const broad = await fetchWith(webContext({ rules }), url);
      expect(broad.text, rules[0]!.rule).toMatch(/is a loopback address/);
    }
    expect(site.hits).toEqual([]);
    const named = await fetchWith(webContext({ rules: allow("WebFetch(domain:127.0.0.1)") }), url);
    expect(named.text).toContain("internal page");
  });

  it("judges literal addresses in every spelling the URL parser accepts", async () => {
    for (const url of [
      "http://2130706433/",
      "http://0x7f.1/",
      "http://[::1]/",
      "http://[::ffff:7f00:1]/",
      "http://169.254.169.254/latest/meta-data/",
      "https://10.0.0.1/",
    ]) {
      const { result, text } = await fetchWith(webContext(), url);
      expect(result.isError, url).toBe(true);
      expect(text, url).toMatch(/is a (loopback|link-local|private-network) address/);
    }
  });

  it("judges the address a name resolves to: localhost is loopback", async () => {
    const site = await serve(routes({ "/": { body: "<p>local dev server</p>" } }));
    const url = `http://localhost:${site.port}/`;
    const denied = await fetchWith(webContext(), url);
    expect(denied.text).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    const allowed = await fetchWith(webContext({ rules: allow("WebFetch(domain:localhost)") }), url);
    expect(allowed.text).toContain("local dev server");
  });

  it("denies a name whose answer mixes a public and a loopback address", async () => {
    const site = await serve(routes({ "/": { body: "<p>secret</p>" } }));
    const resolve: Resolver = async () => [
      { address: "127.0.0.2", family: 4 },
      { address: "127.0.0.1", family: 4 },
    ];
    // 127.0.0.2 stands in for a public address: the test may not leave the machine. (A .localhost name
    // keeps plain http; any other name would be upgraded to https.)
    const isPublic = (address: string) => address === "127.0.0.2";
    await expect(
      runWebFetch({ url: `http://rebind.localhost:${site.port}/`, prompt: "" }, callContext(webContext()), {
        resolve,
        isPublic,
      }),
    ).rejects.toThrow(/rebind\.localhost resolves to 127\.0\.0\.1, a loopback address/);
    expect(site.hits).toEqual([]);
  });

  it("connects to the address it judged, and judges the address of each redirect hop (DNS rebinding)", async () => {
    // The "public" server answers on 127.0.0.2; the internal one on 127.0.0.1 must never be reached.
    const internal = await serve(routes({ "/next": { body: "<p>internal secret</p>" } }), "127.0.0.1");
    const outside = await serve((req, res) => {
      if (req.url === "/start") {
        // A new connection for the next hop, so its name is resolved again.
        res.writeHead(302, { location: "/next", connection: "close" }).end();
      } else res.writeHead(200, { "content-type": "text/html" }).end("<p>public next page</p>");
    }, "127.0.0.2");
    expect(outside.port).not.toBe(0);
    let answers = 0;
    const resolve: Resolver = async () => {
      answers++;
      // First answer public; every later one points at the internal address, as a rebinding server would.
      return [{ address: answers === 1 ? "127.0.0.2" : "127.0.0.1", family: 4 }];
    };
    const isPublic = (address: string) => address === "127.0.0.2";
    // What matters is that 127.0.0.1 is refused before any connection to it, whatever port it serves.
    const url = `http://rebind.localhost:${outside.port}/start`;
    await expect(
      runWebFetch({ url, prompt: "" }, callContext(webContext()), { resolve, isPublic }),
    ).rejects.toThrow(/rebind\.localhost resolves to 127\.0\.0\.1, a loopback address/);
    expect(outside.hits).toEqual(["/start"]);
    expect(internal.hits).toEqual([]);
    expect(answers).toBe(2);

    // With one answer per connection, a fetch that needs one connection is served by the judged address.
    answers = 0;
    const page = await runWebFetch(
      { url: `http://rebind.localhost:${outside.port}/page`, prompt: "" },
      callContext(webContext()),
      { resolve, isPublic },
    );
    expect(ToolResult.text(page)).toContain("public next page");
    expect(answers).toBe(1);
  });
});
