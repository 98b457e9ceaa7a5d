// Coordination tools of the contract (docs/tools.md, docs/coordination.md): locks, notes, messages,
// approvals and questions, and the permission-prompt tool. Thin adapters over the services.
import type { LockService } from '../services/locks.js';
import type { NoteService } from '../services/notes.js';
import type { MessageService } from '../services/messages.js';
import type { RequestService } from '../approvals/service.js';
import type { PermissionService } from '../services/permissions.js';
import { defineTool, type ToolDef } from './registry.js';
import { LockFilesInput, ListLocksInput, ReleaseFilesInput } from '../contract/locks.js';
import { DeleteNoteInput, ListNotesInput, ReadNoteInput, WatchNotesInput, WriteNoteInput } from '../contract/notes.js';
import { AskLeadInput, CheckPermissionInput, ListRequestsInput, ReadMessagesInput, RequestApprovalInput, RespondInput, SendMessageInput } from '../contract/coord.js';

const BOTH = ['lead', 'agent'] as const;

export interface CoordServices {
  locks: LockService;
  notes: NoteService;
  messages: MessageService;
  requests: RequestService;
  permissions: PermissionService;
}

export function coordTools(s: CoordServices): ToolDef[] {
  const sec = (ms: number): string => `waiting ${Math.round(ms / 1000)}s`;
  return [
    defineTool({
      name: 'lock_files', roles: BOTH, title: 'Lock files',
      description: 'Lock files in your work tree before editing them: all or nothing. Waits up to timeout_s for files other agents hold (0 = fail at once); a request that would deadlock fails at once with the cycle. It returns once the files are writable in your sandbox (not_writable lists any the hub could not make so). Locks expire after ttl_s unless you keep working (any call renews them) and are released when your job ends.',
      input: LockFilesInput,
      // timeout_s 0 fails at once instead of waiting: no progress, answered as one JSON body over HTTP.
      blocks: (a) => a.timeout_s !== 0,
      handler: (i, c, x) => s.locks.acquire(i, c, x.signal, (ms) => x.progress(ms / 1000, undefined, sec(ms))),
    }),
    defineTool({
      name: 'release_files', roles: BOTH, title: 'Release files',
      description: 'Release locks you hold: the given files, or all of yours when files is omitted.',
      input: ReleaseFilesInput, annotations: { idempotentHint: true },
      handler: (i, c) => s.locks.release(i, c),
    }),
    defineTool({
      name: 'list_locks', roles: BOTH, title: 'List locks',
      description: 'Current locks (path, holder, reason, acquired_at, expires_at, waiters, repo), optionally under a path prefix. Locks are keyed by repository, branch and path inside it: a lock taken in another clone of your repository on your branch shows your own path, with holder_path where its holder has it.',
      input: ListLocksInput, annotations: { readOnlyHint: true },
      handler: (i, c) => s.locks.list(i, c),
    }),
    defineTool({
      name: 'write_note', roles: BOTH, title: 'Write a note',
      description: 'Store a value under a key ("/" namespaces, e.g. "api/schema"). With expected_version it is compare-and-set (0 = must not exist yet); a mismatch fails with the current version.',
      input: WriteNoteInput,
      handler: (i, c) => s.notes.write(i, c),
    }),
    defineTool({
      name: 'read_note', roles: BOTH, title: 'Read a note',
      description: 'A note\'s value, version, author and updated_at, or found: false. A value too long for one result comes in pieces: next_offset is not null → call again with offset: next_offset and version: the version you got, until next_offset is null.',
      input: ReadNoteInput, annotations: { readOnlyHint: true },
      handler: (i) => s.notes.read(i),
    }),
    defineTool({
      name: 'list_notes', roles: BOTH, title: 'List notes',
      description: 'Keys (with version, author, updated_at) under a prefix; pages with limit and next_cursor.',
      input: ListNotesInput, annotations: { readOnlyHint: true },
      handler: (i) => s.notes.list(i),
    }),
    defineTool({
      name: 'watch_notes', roles: BOTH, title: 'Watch notes',
      description: 'Block until a note among keys/prefix changes (or, with until_value, holds that value; with after_version, is past that version). Returns the notes, or timed_out.',
      input: WatchNotesInput, annotations: { readOnlyHint: true },
      handler: (i, _c, x) => s.notes.watch(i, x.signal, (ms) => x.progress(ms / 1000, undefined, sec(ms))),
    }),
    defineTool({
      name: 'delete_note', roles: BOTH, title: 'Delete a note',
      description: 'Delete a note; with expected_version only if it is still at that version.',
      input: DeleteNoteInput, annotations: { destructiveHint: true, idempotentHint: true },
      handler: (i, c) => s.notes.delete(i, c),
    }),
    defineTool({
      name: 'send_message', roles: BOTH, title: 'Send a message',
      description: 'Send text to a job id, to "lead", or to "*" (your siblings). A running agent gets it in its conversation at once; others when they next run or read_messages.',
      input: SendMessageInput,
      handler: (i, c) => s.messages.send(c, i.to, i.text),
    }),
    defineTool({
      name: 'read_messages', roles: BOTH, title: 'Read messages',
      description: 'Messages sent to you (unread ones by default); returned messages are marked read.',
      input: ReadMessagesInput,
      handler: (i, c) => s.messages.read(c, i.unread_only, i.limit),
    }),
    defineTool({
      name: 'request_approval', roles: ['agent'], title: 'Request approval',
      description: 'Ask for approval before you do something, with an optional plan {rationale, resources, risks, rollback}. who: "person" when only the person may decide (the lead cannot approve it for them), "lead" for the lead alone, "any" (default) for either. Blocks until decided; returns decision approved | rejected | timed_out, a comment and answered_by.',
      input: RequestApprovalInput,
      handler: (i, c, x) => s.requests.approval(c, i, x.signal, (ms) => x.progress(ms / 1000, undefined, sec(ms))),
    }),
    defineTool({
      name: 'ask_lead', roles: ['agent'], title: 'Ask the lead',
      description: 'Ask the lead (or, with who: "person", only the person) a question, optionally with options to choose from, and block until answered or timed out.',
      input: AskLeadInput,
      handler: (i, c, x) => s.requests.ask(c, i, x.signal, (ms) => x.progress(ms / 1000, undefined, sec(ms))),
    }),
    defineTool({
      name: 'list_requests', roles: ['lead'], title: 'List requests',
      description: 'Approvals, questions and permission prompts from agents (pending by default), with who may answer (who / awaiting), how_to_answer, answered_by and answered_at, and late answers that came after a request closed.',
      input: ListRequestsInput, annotations: { readOnlyHint: true },
      handler: (i, c) => s.requests.list(i, c),
    }),
    defineTool({
      name: 'respond', roles: ['lead'], title: 'Respond to a request',
      description: 'Answer a request: decision approved|rejected for approvals and permission prompts, answer for questions, optional comment. Returns the closed request. Requests awaiting "person" are refused: tell the person how to answer them (their form, or `overseer respond <request_id> …` in a terminal).',
      input: RespondInput,
      handler: (i, c) => s.requests.respond(i, c),
    }),
    defineTool({
      name: 'check_permission', roles: ['agent'], title: 'Check permission', raw: true,
      description: 'Called by Claude Code (--permission-prompt-tool) for a tool call that needs permission; answered by Overseer\'s policy or the lead.',
      input: CheckPermissionInput,
      handler: (i, c, x) => s.permissions.check(c, i.tool_name, i.input, x.signal, (ms) => x.progress(ms / 1000, undefined, sec(ms))),
    }),
  ];
}
