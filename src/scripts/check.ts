// A script is checked completely before anything of it runs (issue 28, docs/scripts.md "Refused
// before anything starts"): it must parse (QuickJS, ./sandbox.ts checkSyntax), it may call no
// function the sandbox does not have (`fetch`, `require`, `setTimeout`, `console.log` …), and an
// agent() call whose options are written out may not give an option that does not exist or a
// literal value the option refuses. The script is read as a syntax tree (acorn, the parser ESLint
// and dependency-cruiser use); what only the run can know (an option computed at run time) is
// still checked at the call, as the script's catchable TypeError.
import { parse, type Node } from 'acorn';
import { full } from 'acorn-walk';
import { ScriptAgentOptions } from '../contract/scripts.js';
import { checkSyntax, quickJsGlobals, wrapMeta, type ScriptError } from './sandbox.js';

/** What the prelude gives a script (src/scripts/prelude.ts), besides QuickJS's own globals. */
const API = ['agent', 'parallel', 'pipeline', 'phase', 'log', 'args', 'budget', 'workflow', 'approve', 'meta'];
/** A bundled script of the hub's also has `hub` (src/scripts/bundled.ts). */
const PRIVILEGED = ['hub'];

const OPTIONS = ScriptAgentOptions.shape as Record<string, { safeParse(v: unknown): { success: boolean; error?: { issues: { message: string }[] } } }>;

/** null, or the first problem of the script with its line. */
export async function checkScript(source: string, o: { privileged?: boolean } = {}): Promise<ScriptError | null> {
  const syntax = await checkSyntax(source);
  if (syntax) return syntax;
  const known = new Set([...(await quickJsGlobals()), ...API, ...(o.privileged ? PRIVILEGED : [])]);
  return staticProblem(source, known);
}

type AnyNode = Node & Record<string, any>;

function staticProblem(source: string, known: Set<string>): ScriptError | null {
  let ast: Node;
  try {
    ast = parse(wrapMeta(source), { ecmaVersion: 'latest', sourceType: 'script', allowReturnOutsideFunction: true, allowAwaitOutsideFunction: true, locations: true });
  } catch {
    return null; // QuickJS parsed it: what acorn cannot read is left to the run.
  }
  const declared = declaredNames(ast);
  let problem: ScriptError | null = null;
  const at = (n: AnyNode, name: string, message: string): void => {
    problem ??= { name, message, line: n.loc!.start.line, column: n.loc!.start.column + 1 };
  };
  full(ast, (node) => {
    const n = node as AnyNode;
    if (problem || n.type !== 'CallExpression') return;
    // The name the call reaches first: f() or f.g() / f.g.h().
    let root: AnyNode = n.callee;
    while (root.type === 'MemberExpression') root = root.object;
    if (root.type === 'Identifier' && !declared.has(root.name) && !known.has(root.name)) {
      const what = n.callee.type === 'Identifier' ? `${root.name}()` : `${root.name}.…()`;
      at(n, 'ReferenceError', `${what} is not a function a script has: a script reaches the hub only through agent, parallel, pipeline, phase, log, args, budget, workflow and approve (no file system, network, timers or console; docs/scripts.md)`);
      return;
    }
    if (n.callee.type === 'Identifier' && n.callee.name === 'agent' && !declared.has('agent')) agentCall(n, at);
  });
  return problem;
}

/** agent(prompt, opts) with opts written as an object: every option must exist, and a literal value must be one the option takes. */
function agentCall(n: AnyNode, at: (n: AnyNode, name: string, message: string) => void): void {
  const [prompt, opts] = n.arguments as AnyNode[];
  if (prompt?.type === 'Literal' && (typeof prompt.value !== 'string' || !prompt.value.trim())) at(prompt, 'TypeError', 'agent(prompt, opts): prompt must be a non-empty string');
  if (opts?.type !== 'ObjectExpression') return;
  for (const p of opts.properties as AnyNode[]) {
    if (p.type !== 'Property' || p.computed) continue;
    const key = p.key.type === 'Identifier' ? p.key.name : String(p.key.value);
    const option = OPTIONS[key];
    if (!option) {
      at(p, 'TypeError', `agent() has no option "${key}": the options are ${Object.keys(OPTIONS).join(', ')}`);
      return;
    }
    const value = literal(p.value);
    if (value === undefined) continue;
    const r = option.safeParse(value.v);
    if (!r.success) at(p.value, 'TypeError', `agent() option ${key}: ${r.error?.issues[0]?.message ?? 'not a value it takes'}`);
  }
}

/** A value written out in the source (string, number, boolean, null, and arrays of them), else undefined. */
function literal(n: AnyNode): { v: unknown } | undefined {
  if (n.type === 'Literal' && !n.regex) return { v: n.value };
  if (n.type === 'UnaryExpression' && n.operator === '-' && n.argument.type === 'Literal' && typeof n.argument.value === 'number') return { v: -n.argument.value };
  if (n.type === 'ArrayExpression') {
    const items = (n.elements as (AnyNode | null)[]).map((e) => (e ? literal(e) : undefined));
    return items.every((i) => i !== undefined) ? { v: items.map((i) => i!.v) } : undefined;
  }
  return undefined;
}

/** Every name the script declares anywhere (variables, functions, classes, parameters, catch bindings). */
function declaredNames(ast: Node): Set<string> {
  const names = new Set<string>();
  const pattern = (p: AnyNode | null | undefined): void => {
    if (!p) return;
    if (p.type === 'Identifier') names.add(p.name);
    else if (p.type === 'ObjectPattern') for (const q of p.properties as AnyNode[]) pattern(q.type === 'RestElement' ? q.argument : q.value);
    else if (p.type === 'ArrayPattern') for (const q of p.elements as (AnyNode | null)[]) pattern(q);
    else if (p.type === 'AssignmentPattern') pattern(p.left);
    else if (p.type === 'RestElement') pattern(p.argument);
  };
  full(ast, (node) => {
    const n = node as AnyNode;
    if (n.type === 'VariableDeclarator') pattern(n.id);
    else if (n.type === 'FunctionDeclaration' || n.type === 'FunctionExpression' || n.type === 'ArrowFunctionExpression') {
      if (n.id) names.add(n.id.name);
      for (const p of n.params as AnyNode[]) pattern(p);
    } else if ((n.type === 'ClassDeclaration' || n.type === 'ClassExpression') && n.id) names.add(n.id.name);
    else if (n.type === 'CatchClause') pattern(n.param);
  });
  return names;
}
