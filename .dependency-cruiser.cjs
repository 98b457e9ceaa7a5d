// The layer rules of src/, checked by `npm run deps` (part of `npm test`). docs/architecture.md
// explains them. Each layer may import the layers below it and the folders of its own row;
// an import that points up a layer, an import loop, or a module in no layer fails the check.
// Today's breaks are listed in .dependency-cruiser-known-violations.json, which may only shrink.
// Type-only imports count (tsPreCompilationDeps), and so do dynamic `import()`s.

/** The layers, from the top. `dirs` are folders under src/, `files` single files in src/. */
const LAYERS = [
  { name: 'commands', dirs: ['cli'], files: [] },
  // worker: `overseer worker`'s process (issue 30), an entry beside the hub's (hubproc): it will compose
  // a runner of its own, so it sits above the composition layer.
  { name: 'entry', dirs: ['hubproc', 'tui', 'worker'], files: ['index'] },
  { name: 'composition', dirs: [], files: ['hub', 'compose'] },
  { name: 'transport', dirs: ['server', 'mcp', 'web'], files: [] },
  { name: 'tools', dirs: ['tools'], files: [] },
  {
    name: 'features',
    dirs: [
      'services', 'workflow', 'debate', 'runs', 'scripts', 'approvals', 'kb', 'limits', 'search', 'floor',
      'money', 'models', 'projects', 'takeover', 'templates', 'retry', 'branches', 'confine',
      'doctor', 'events', 'roles', 'brief',
    ],
    files: [],
  },
  // The asynchronous data-access layer over Kysely (SQLite and PostgreSQL, issue 29): above the
  // synchronous store it opens SQLite through (store/db.ts), which may not import it.
  { name: 'database', dirs: ['store/sql'], files: [] },
  { name: 'infrastructure', except: '^src/store/sql/', dirs: ['store', 'launch', 'prompts', 'config', 'git', 'http', 'hubfiles', 'fakemodel'], files: ['config'] },
  { name: 'contract', dirs: ['contract'], files: [] },
  { name: 'core', dirs: ['domain'], files: ['errors', 'clock', 'log', 'lazy', 'serial', 'version', 'json'] },
];
/** The bundled fake model APIs: the demo (cli/) and the doctor's codex shell check use them. */
const FAKEMODEL = '^src/fakemodel/';

function pattern(layers) {
  const dirs = layers.flatMap((l) => l.dirs);
  const files = layers.flatMap((l) => l.files);
  const parts = [];
  if (dirs.length) parts.push(`^src/(${dirs.join('|')})/`);
  if (files.length) parts.push(`^src/(${files.join('|')})\\.tsx?$`);
  return parts.join('|');
}

const upRules = LAYERS.slice(1).map((layer, i) => ({
  name: `not-up-from-${layer.name}`,
  comment:
    `${layer.name} (${pattern([layer])}) may import only the layers below it and its own row; ` +
    'this import points up a layer. Move the shared part down (docs/architecture.md, "The layers").',
  severity: 'error',
  // domain has its own, stricter rule (domain-imports-only-domain); a layer's `except` is a
  // folder inside one of its folders that is a layer of its own.
  from: { path: pattern([layer]), ...(layer.name === 'core' ? { pathNot: '^src/domain/' } : layer.except ? { pathNot: layer.except } : {}) },
  to: { path: pattern(LAYERS.slice(0, i + 1)) },
}));

const inALayer = pattern(LAYERS);

module.exports = {
  forbidden: [
    ...upRules,
    {
      name: 'domain-imports-only-domain',
      comment:
        'src/domain is the pure core: it imports nothing of src outside itself. Pass what it needs ' +
        'in as arguments, or move the pure part into src/domain.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { path: '^src/', pathNot: '^src/domain/' },
    },
    {
      name: 'domain-has-no-io',
      comment:
        'src/domain does no I/O: of node\'s own modules it may use only node:path. Do the I/O in ' +
        'the caller and pass the result in.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { dependencyTypes: ['core'], pathNot: '^(node:)?path(/posix)?$' },
    },
    {
      name: 'domain-pure-packages',
      comment:
        'src/domain uses only packages without I/O (zod, shell-quote). Add a package here only ' +
        'if it does no I/O.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: {
        dependencyTypes: ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        pathNot: '(^|/)node_modules/(zod|shell-quote)/',
      },
    },
    {
      name: 'contract-pure-packages',
      comment:
        'src/contract holds the tools\' zod input schemas and result types: of packages it uses ' +
        'only zod, and no I/O, so every layer above can share it.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        pathNot: '(^|/)node_modules/zod/',
      },
    },
    {
      name: 'fakemodel-only-for-demo-and-doctor',
      comment:
        'src/fakemodel is the bundled fake model (scripted Anthropic and OpenAI APIs on ' +
        '127.0.0.1); only the demo (cli/) and `overseer doctor` run it. Nothing else of the ' +
        'product may depend on a fake (docs/decisions.md, "The bundled fake model").',
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/(cli|doctor)/|${FAKEMODEL}` },
      to: { path: FAKEMODEL },
    },
    {
      name: 'fakemodel-stands-alone',
      comment: 'The fake model stands alone: of src it may import only src/http and the core.',
      severity: 'error',
      from: { path: FAKEMODEL },
      to: { path: '^src/', pathNot: `${FAKEMODEL}|^src/http/|${pattern(LAYERS.slice(-1))}` },
    },
    {
      name: 'src-not-to-tests',
      comment: 'Nothing in src imports test/ or bench/: they are not shipped.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'every-module-in-a-layer',
      comment:
        'This module is in no layer, so no rule guards it: add its folder (or file) to a layer ' +
        'in LAYERS of .dependency-cruiser.cjs and to the table in docs/architecture.md.',
      severity: 'error',
      from: {},
      to: { path: '^src/', pathNot: inALayer },
    },
    {
      name: 'every-importer-in-a-layer',
      comment:
        'This module is in no layer, so no rule guards it: add its folder (or file) to a layer ' +
        'in LAYERS of .dependency-cruiser.cjs and to the table in docs/architecture.md.',
      severity: 'error',
      from: { path: '^src/', pathNot: inALayer },
      to: {},
    },
    {
      name: 'no-circular',
      comment:
        'This import is part of an import loop. Break it: the lower module owns a small ' +
        'interface that the higher one implements and passes in.',
      severity: 'error',
      from: { path: '^src/' },
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment:
        'dependency-cruiser cannot resolve this import, so the rules above cannot see where it ' +
        'points. Fix the import, or the resolve options in .dependency-cruiser.cjs.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: '^node_modules/' },
    // Type-only imports are arrows too (a type from a higher layer ties the lower one to it).
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
