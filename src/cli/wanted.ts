// Whether this run of the CLI is for command `name` (`overseer <name> …` or `overseer help <name>`).
// The commands whose flags come from a tool's zod schema (schemaFlags.ts) load the schema only
// then, so `overseer --version` and `--help` still load the CLI alone (test/integration/cli-modules.test.ts).
export function wanted(name: string, argv: readonly string[] = process.argv): boolean {
  const args = argv.slice(2);
  const first = args.find((a) => !a.startsWith('-'));
  return first === name || (first === 'help' && args[args.indexOf('help') + 1] === name);
}
