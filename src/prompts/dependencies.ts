// The "## Results of your dependencies" section of a dependent job's first message (issue 13):
// per dependency its title, id, result, branch, diff stat and PR, so the job starts from what they
// did instead of rediscovering it. Pure: the caller passes the rows.
import type { PromptLibrary } from './load.js';

export interface DependencyFacts {
  id: string;
  title: string;
  status: string;
  result: string | null;
  branch: string | null;
  diff_stat: string | null;
  pr_url: string | null;
}

/** Longest result of one dependency quoted in the section. */
export const DEP_RESULT_CAP = 4000;

export function dependencySection(prompts: PromptLibrary, deps: readonly DependencyFacts[], base?: { branch: string; jobId?: string; merged: string[] }): string | undefined {
  if (deps.length === 0) return undefined;
  const results = deps.map((d) => {
    const lines = [`### ${d.title} (${d.id}, ${d.status})`];
    if (d.branch) lines.push(`Branch: ${d.branch}`);
    if (d.pr_url) lines.push(`Pull request: ${d.pr_url}`);
    if (d.diff_stat) lines.push(`Changes:\n\`\`\`\n${d.diff_stat.trim()}\n\`\`\``);
    const r = (d.result ?? '').trim();
    lines.push(r ? `Result:\n${r.length > DEP_RESULT_CAP ? `${r.slice(0, DEP_RESULT_CAP)}\n[… ${r.length - DEP_RESULT_CAP} more characters]` : r}` : 'Result: (none reported)');
    return lines.join('\n');
  }).join('\n\n');
  const baseLine = base
    ? `Your worktree's branch starts from ${base.branch}${base.jobId ? ` (the branch of ${base.jobId})` : ''}${base.merged.length ? `, with ${base.merged.join(', ')} merged in` : ''}: their commits are already in your tree.\n`
    : '';
  return prompts.render('dependency-results', { base: baseLine, results });
}
