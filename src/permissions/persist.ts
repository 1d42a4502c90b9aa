export function persistRule(_projectDir: string, _rule: string): void {}
