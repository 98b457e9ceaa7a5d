// Forward-only, versioned migrations. Never reorder or rewrite an entry: append a new one.
// Each runs in its own transaction together with its row in schema_migrations.

export interface Migration {
  version: number;
  name: string;
  up: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'jobs, attempts, events, messages, requests',
    up: `
      CREATE TABLE jobs (
        id              TEXT PRIMARY KEY,
        seq             INTEGER NOT NULL UNIQUE,
        parent_id       TEXT REFERENCES jobs(id),
        depth           INTEGER NOT NULL,
        title           TEXT NOT NULL,
        prompt          TEXT NOT NULL,
        provider        TEXT NOT NULL,
        model           TEXT,
        cwd             TEXT NOT NULL,
        work_dir        TEXT,
        repo_root       TEXT,
        worktree        INTEGER NOT NULL DEFAULT 0,
        branch          TEXT,
        base_commit     TEXT,
        priority        INTEGER NOT NULL DEFAULT 0,
        max_turns       INTEGER,
        budget_usd      REAL,
        timeout_s       INTEGER,
        context_json    TEXT,
        template        TEXT,
        checks_json     TEXT NOT NULL DEFAULT '[]',
        retry           TEXT NOT NULL DEFAULT 'none',
        labels_json     TEXT NOT NULL DEFAULT '[]',
        depends_on_json TEXT NOT NULL DEFAULT '[]',
        status          TEXT NOT NULL,
        status_message  TEXT,
        progress        REAL,
        result          TEXT,
        outcome         TEXT,
        error           TEXT,
        failure_class   TEXT,
        session_id      TEXT,
        turns           INTEGER NOT NULL DEFAULT 0,
        cost_usd        REAL NOT NULL DEFAULT 0,
        pid             INTEGER,
        pr_url          TEXT,
        diff_stat       TEXT,
        git_note        TEXT,
        token_hash      TEXT UNIQUE,
        resume_message  TEXT,
        created_at      INTEGER NOT NULL,
        started_at      INTEGER,
        ended_at        INTEGER,
        updated_at      INTEGER NOT NULL
      );
      CREATE INDEX jobs_status ON jobs(status);
      CREATE INDEX jobs_parent ON jobs(parent_id);

      CREATE TABLE job_deps (
        job_id TEXT NOT NULL REFERENCES jobs(id),
        dep_id TEXT NOT NULL REFERENCES jobs(id),
        PRIMARY KEY (job_id, dep_id)
      );
      CREATE INDEX job_deps_dep ON job_deps(dep_id);

      CREATE TABLE attempts (
        job_id        TEXT NOT NULL REFERENCES jobs(id),
        n             INTEGER NOT NULL,
        kind          TEXT NOT NULL,
        status        TEXT NOT NULL,
        started_at    INTEGER NOT NULL,
        ended_at      INTEGER,
        session_id    TEXT,
        pid           INTEGER,
        exit_code     INTEGER,
        signal        TEXT,
        turns         INTEGER NOT NULL DEFAULT 0,
        cost_usd      REAL NOT NULL DEFAULT 0,
        failure_class TEXT,
        error         TEXT,
        diagnosis     TEXT,
        transcript    TEXT NOT NULL,
        PRIMARY KEY (job_id, n)
      );

      CREATE TABLE events (
        id        INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id    TEXT NOT NULL,
        at        INTEGER NOT NULL,
        kind      TEXT NOT NULL,
        data_json TEXT
      );
      CREATE INDEX events_job ON events(job_id, id);

      CREATE TABLE messages (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        from_id      TEXT NOT NULL,
        to_id        TEXT NOT NULL,
        text         TEXT NOT NULL,
        created_at   INTEGER NOT NULL,
        delivered_at INTEGER,
        read_at      INTEGER
      );
      CREATE INDEX messages_to ON messages(to_id, id);

      CREATE TABLE requests (
        id          TEXT PRIMARY KEY,
        job_id      TEXT NOT NULL,
        kind        TEXT NOT NULL,
        summary     TEXT NOT NULL,
        plan_json   TEXT,
        options_json TEXT,
        status      TEXT NOT NULL,
        decision    TEXT,
        answer      TEXT,
        comment     TEXT,
        created_at  INTEGER NOT NULL,
        answered_at INTEGER
      );
      CREATE INDEX requests_job ON requests(job_id, status);
    `,
  },
  {
    version: 2,
    name: 'locks, lock waits, notes, request details',
    up: `
      CREATE TABLE locks (
        path        TEXT PRIMARY KEY,
        holder      TEXT NOT NULL,
        reason      TEXT,
        ttl_s       INTEGER NOT NULL,
        acquired_at INTEGER NOT NULL,
        expires_at  INTEGER NOT NULL
      );
      CREATE INDEX locks_holder ON locks(holder);
      CREATE INDEX locks_expiry ON locks(expires_at);

      CREATE TABLE lock_waits (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        holder     TEXT NOT NULL,
        paths_json TEXT NOT NULL,
        reason     TEXT,
        ttl_s      INTEGER NOT NULL,
        status     TEXT NOT NULL DEFAULT 'waiting',
        created_at INTEGER NOT NULL
      );

      CREATE TABLE notes (
        key        TEXT PRIMARY KEY,
        value      TEXT NOT NULL,
        version    INTEGER NOT NULL,
        author     TEXT NOT NULL,
        updated_at INTEGER NOT NULL
      );

      ALTER TABLE requests ADD COLUMN tool_name TEXT;
      ALTER TABLE requests ADD COLUMN tool_input_json TEXT;
      ALTER TABLE requests ADD COLUMN expires_at INTEGER;
      ALTER TABLE requests ADD COLUMN answered_by TEXT;
    `,
  },
  {
    version: 3,
    name: 'workflows; phase jobs carry their workflow, schema and structured result',
    up: `
      CREATE TABLE workflows (
        id               TEXT PRIMARY KEY,
        seq              INTEGER NOT NULL UNIQUE,
        title            TEXT NOT NULL,
        task             TEXT NOT NULL,
        status           TEXT NOT NULL,
        cycle            INTEGER NOT NULL DEFAULT 0,
        phase            TEXT NOT NULL,
        cwd              TEXT NOT NULL,
        repo_root        TEXT,
        worktree_path    TEXT,
        branch           TEXT,
        base_commit      TEXT,
        implementer_json TEXT NOT NULL,
        reviewer_json    TEXT NOT NULL,
        max_cycles       INTEGER NOT NULL,
        approve_plan     INTEGER NOT NULL DEFAULT 0,
        plan_approved    INTEGER NOT NULL DEFAULT 0,
        checks_json      TEXT NOT NULL DEFAULT '[]',
        template         TEXT,
        phase_limits_json TEXT,
        state_json       TEXT NOT NULL DEFAULT '{}',
        blocked_json     TEXT,
        current_job      TEXT,
        approval_request TEXT,
        pr_url           TEXT,
        git_note         TEXT,
        created_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL,
        ended_at         INTEGER
      );
      CREATE INDEX workflows_status ON workflows(status);
      ALTER TABLE jobs ADD COLUMN workflow_id TEXT;
      ALTER TABLE jobs ADD COLUMN phase TEXT;
      ALTER TABLE jobs ADD COLUMN cycle INTEGER;
      ALTER TABLE jobs ADD COLUMN json_schema TEXT;
      ALTER TABLE jobs ADD COLUMN structured_json TEXT;
      CREATE INDEX jobs_workflow ON jobs(workflow_id);
    `,
  },
  {
    version: 4,
    name: 'tokens, unknown costs, lock violations, thread usage',
    up: `
      ALTER TABLE jobs ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN cost_unknown INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN thread_usage_json TEXT;
      ALTER TABLE jobs ADD COLUMN lock_violations_json TEXT;
      ALTER TABLE attempts ADD COLUMN input_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE attempts ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE attempts ADD COLUMN cost_unknown INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 5,
    name: 'requests: who may answer, lead-seen marks, late answers',
    up: `
      ALTER TABLE requests ADD COLUMN who TEXT NOT NULL DEFAULT 'any';
      ALTER TABLE requests ADD COLUMN lead_seen_at INTEGER;
      CREATE TABLE request_late_answers (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        request_id   TEXT NOT NULL,
        job_id       TEXT NOT NULL,
        answered_by  TEXT NOT NULL,
        decision     TEXT,
        answer       TEXT,
        comment      TEXT,
        at           INTEGER NOT NULL,
        lead_seen_at INTEGER
      );
      CREATE INDEX request_late_answers_request ON request_late_answers(request_id);
      CREATE INDEX request_late_answers_job ON request_late_answers(job_id, lead_seen_at);
    `,
  },
  {
    version: 6,
    name: 'cache tokens, child stderr, usage of the hub\'s own model calls',
    up: `
      ALTER TABLE jobs ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE jobs ADD COLUMN cache_creation_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE attempts ADD COLUMN cache_read_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE attempts ADD COLUMN cache_creation_tokens INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE attempts ADD COLUMN stderr TEXT;
      CREATE TABLE usage (
        id                    INTEGER PRIMARY KEY,
        job_id                TEXT,
        attempt               INTEGER,
        kind                  TEXT NOT NULL,
        model                 TEXT,
        input_tokens          INTEGER NOT NULL DEFAULT 0,
        output_tokens         INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens     INTEGER NOT NULL DEFAULT 0,
        cache_creation_tokens INTEGER NOT NULL DEFAULT 0,
        cost_usd              REAL NOT NULL DEFAULT 0,
        cost_unknown          INTEGER NOT NULL DEFAULT 0,
        created_at            INTEGER NOT NULL
      );
      CREATE INDEX usage_job ON usage(job_id);
    `,
  },
  {
    version: 10,
    name: "workflows: the hub's own plan text and record of milestone check-offs",
    up: `
      ALTER TABLE workflows ADD COLUMN plan_text TEXT;
      CREATE TABLE workflow_milestones (
        workflow_id TEXT NOT NULL REFERENCES workflows(id) ON DELETE CASCADE,
        idx         INTEGER NOT NULL,
        text        TEXT NOT NULL,
        done_at     INTEGER,
        done_cycle  INTEGER,
        done_job    TEXT,
        PRIMARY KEY (workflow_id, idx)
      );
    `,
  },
  {
    version: 11,
    name: 'health: last activity of a job, its warnings (stalled, turns_high, budget_high, time_high, long_running)',
    up: `
      ALTER TABLE jobs ADD COLUMN last_event_at INTEGER;
      ALTER TABLE jobs ADD COLUMN last_activity TEXT;
      CREATE TABLE job_warnings (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id       TEXT NOT NULL REFERENCES jobs(id),
        kind         TEXT NOT NULL,
        detail       TEXT NOT NULL,
        raised_at    INTEGER NOT NULL,
        cleared_at   INTEGER,
        lead_seen_at INTEGER,
        reaction     TEXT
      );
      CREATE INDEX job_warnings_job ON job_warnings(job_id, kind);
      CREATE INDEX job_warnings_open ON job_warnings(cleared_at);
    `,
  },
  {
    version: 12,
    name: 'transcript search: every attempt\'s assistant text, tool calls and results in FTS5 (src/search)',
    up: `
      CREATE TABLE transcript_rows (
        id      INTEGER PRIMARY KEY, -- at * 1024 + n: newest first is rowid order (src/search/store.ts)
        job_id  TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        line    INTEGER NOT NULL,    -- 1-based line of the attempt's transcript file
        at      INTEGER NOT NULL,
        kind    TEXT NOT NULL,
        tool    TEXT,
        body    TEXT NOT NULL
      );
      CREATE VIEW transcript_fts_src AS SELECT id, body, 'j' || hex(job_id) AS job FROM transcript_rows;
      CREATE VIRTUAL TABLE transcript_fts USING fts5(
        body, job,
        content = 'transcript_fts_src', content_rowid = 'id', columnsize = 0,
        tokenize = 'unicode61 remove_diacritics 2'
      );
      CREATE TRIGGER transcript_rows_ai AFTER INSERT ON transcript_rows BEGIN
        INSERT INTO transcript_fts(rowid, body, job) VALUES (new.id, new.body, 'j' || hex(new.job_id));
      END;
      CREATE TRIGGER transcript_rows_ad AFTER DELETE ON transcript_rows BEGIN
        INSERT INTO transcript_fts(transcript_fts, rowid, body, job) VALUES ('delete', old.id, old.body, 'j' || hex(old.job_id));
      END;
      CREATE TABLE transcript_index_state (
        job_id  TEXT NOT NULL,
        attempt INTEGER NOT NULL,
        lines   INTEGER NOT NULL,
        done    INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (job_id, attempt)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 13,
    name: 'budgets: what each spawn reserved of the house, label and subtree budgets (src/money/budgets.ts)',
    up: `
      CREATE TABLE budget_reservations (
        job_id        TEXT PRIMARY KEY REFERENCES jobs(id),
        amount_usd    REAL NOT NULL,    -- the estimate reserved at spawn (or resume)
        base_cost_usd REAL NOT NULL,    -- the job's cost_usd then: what it spends after counts against the reservation
        basis         TEXT NOT NULL,    -- how the estimate was made
        reserved_at   INTEGER NOT NULL,
        released_at   INTEGER,          -- set when the job settles; null while held
        booked_usd    REAL              -- what the job spent while it held the reservation
      );
      CREATE INDEX budget_reservations_held ON budget_reservations(released_at);
      CREATE INDEX jobs_estimate ON jobs(provider, model, template, ended_at);
    `,
  },
  {
    version: 14,
    name: 'budgets: covering indexes for what a budget\'s scope spent and for the estimate of a model\'s jobs',
    up: `
      CREATE INDEX jobs_spend ON jobs(cost_usd);
      CREATE INDEX jobs_label_spend ON jobs(labels_json, cost_usd);
      CREATE INDEX jobs_estimate_model ON jobs(provider, model, ended_at);
    `,
  },
  {
    version: 15,
    name: 'model auto-choice: the tier, reason, classifier and fallback of a job spawned with model "auto" (src/models)',
    up: `
      ALTER TABLE jobs ADD COLUMN model_choice_json TEXT;
    `,
  },
  {
    version: 16,
    name: 'worktree preparation: bootstrap (whether to run it, what it did) and the base a worktree job stacks on (src/git/bootstrap.ts, src/git/stack.ts)',
    up: `
      CREATE TABLE job_setup (
        job_id      TEXT PRIMARY KEY REFERENCES jobs(id),
        skip        INTEGER NOT NULL DEFAULT 0, -- spawn_agent bootstrap: false
        report_json TEXT,                       -- the last BootstrapReport, null before it ran
        base        TEXT,                       -- spawn_agent base: 'job:<id>' or 'branch:<name>'; null = HEAD or stacked on its dependencies
        stack_json  TEXT,                       -- what its branch was made from: {branch, jobId?, merged[]}
        updated_at  INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 17,
    name: 'conflict guard: files two live worktree branches both change (src/git/overlapGuard.ts)',
    up: `
      CREATE TABLE overlaps (
        id             INTEGER PRIMARY KEY,
        repo_root      TEXT NOT NULL,
        file           TEXT NOT NULL,    -- relative to the repository root
        job_a          TEXT NOT NULL,    -- job_a < job_b
        job_b          TEXT NOT NULL,
        locks_conflict INTEGER NOT NULL DEFAULT 0,
        detected_at    INTEGER NOT NULL,
        cleared_at     INTEGER,          -- one of the two jobs ended
        lead_seen_at   INTEGER,          -- returned once in the lead's wait_for_agents attention
        UNIQUE (job_a, job_b, file)
      );
      CREATE INDEX overlaps_open ON overlaps(cleared_at);
    `,
  },
  {
    version: 18,
    name: 'schedules: a job may not start before its time (not_before), and the series of jobs a repeating schedule makes (src/runs/schedules.ts)',
    up: `
      ALTER TABLE jobs ADD COLUMN not_before INTEGER;  -- ms: the job stays waiting until then (null: no time set)
      ALTER TABLE jobs ADD COLUMN schedule_id TEXT;    -- the schedule this job is an occurrence of
      ALTER TABLE jobs ADD COLUMN occurrence INTEGER;  -- its number in the series, from 1
      CREATE INDEX jobs_not_before ON jobs(status, not_before);
      CREATE INDEX jobs_schedule ON jobs(schedule_id, occurrence);
      CREATE TABLE schedules (
        id          TEXT PRIMARY KEY,
        seq         INTEGER NOT NULL,
        title       TEXT NOT NULL,
        created_by  TEXT NOT NULL,    -- 'lead'
        kind        TEXT NOT NULL,    -- once | every | cron
        every_s     INTEGER,
        cron        TEXT,
        first_at    INTEGER NOT NULL, -- when the first occurrence was due
        until_at    INTEGER,          -- no occurrence starts after this (inclusive)
        max_runs    INTEGER,          -- occurrences in all
        spec_json   TEXT NOT NULL,    -- the job every occurrence is made from (spawn_agent's resolved input)
        status      TEXT NOT NULL,    -- active | done | stopped | cancelled
        stop_reason TEXT,
        runs        INTEGER NOT NULL DEFAULT 0, -- occurrences created
        current_job TEXT,             -- the latest occurrence
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        ended_at    INTEGER
      );
      CREATE INDEX schedules_status ON schedules(status, seq);
    `,
  },
  {
    version: 19,
    name: 'projects: a project on jobs and workflows, and each project\'s archive and flag state (src/projects)',
    up: `
      ALTER TABLE jobs ADD COLUMN project TEXT;
      ALTER TABLE workflows ADD COLUMN project TEXT;
      CREATE INDEX jobs_project ON jobs(project, status);
      CREATE TABLE projects (
        name        TEXT PRIMARY KEY,
        archived_at INTEGER,              -- set: hidden from status/watch/list_agents unless named; no new jobs
        flagged     INTEGER NOT NULL DEFAULT 0,
        note        TEXT,
        created_at  INTEGER NOT NULL
      );
    `,
  },
  {
    version: 20,
    name: 'runs: batch dispatch from a file, its tasks and their jobs (src/runs)',
    up: `
      CREATE TABLE runs (
        id          TEXT PRIMARY KEY,
        title       TEXT NOT NULL,
        file        TEXT,             -- path of the dispatch file, null when given as content
        content     TEXT NOT NULL,    -- snapshot of the file's text
        format      TEXT NOT NULL,    -- toml | yaml
        rules_json  TEXT NOT NULL,    -- concurrency, budget_usd, timeout_s, cwd
        status      TEXT NOT NULL,    -- running | succeeded | failed | stopped | timed_out | cancelled
        note        TEXT,             -- why it stopped (budget, timeout), what was left running
        deadline_at INTEGER,          -- created (or resumed) + timeout_s
        created_at  INTEGER NOT NULL,
        updated_at  INTEGER NOT NULL,
        ended_at    INTEGER
      );
      CREATE INDEX runs_status ON runs(status);
      CREATE TABLE run_tasks (
        run_id    TEXT NOT NULL REFERENCES runs(id),
        task_id   TEXT NOT NULL,
        n         INTEGER NOT NULL,   -- order in the file
        spec_json TEXT NOT NULL,      -- the task as validated, cwd resolved
        state     TEXT NOT NULL,      -- pending | started | skipped | error
        job_id    TEXT,               -- the task's current job
        job_ids_json TEXT NOT NULL DEFAULT '[]', -- every job the task had, oldest first
        error     TEXT,               -- why it was skipped or could not start
        PRIMARY KEY (run_id, task_id)
      ) WITHOUT ROWID;
      CREATE INDEX run_tasks_job ON run_tasks(job_id);
    `,
  },
  {
    version: 21,
    name: 'debates: two sides answer each round independently on the job engine; their turns, verdicts and positions (src/debate)',
    up: `
      CREATE TABLE debates (
        id               TEXT PRIMARY KEY,
        title            TEXT NOT NULL,
        task             TEXT NOT NULL,
        status           TEXT NOT NULL,    -- running | consensus | disagreement | failed | cancelled
        cwd              TEXT NOT NULL,
        repo_root        TEXT,
        worktree_path    TEXT,
        branch           TEXT,
        base_commit      TEXT,
        sides_json       TEXT NOT NULL,    -- [{provider, model?}, {provider, model?}]
        max_rounds       INTEGER NOT NULL,
        loops            INTEGER NOT NULL,
        post_action      TEXT,
        post_action_side INTEGER NOT NULL DEFAULT 0,
        verify           INTEGER NOT NULL DEFAULT 0,
        error            TEXT,             -- why a failed debate failed
        project          TEXT,             -- its turns' jobs carry it (src/projects)
        created_at       INTEGER NOT NULL,
        updated_at       INTEGER NOT NULL,
        ended_at         INTEGER
      );
      CREATE INDEX debates_status ON debates(status, created_at);
      CREATE TABLE debate_turns (
        debate_id   TEXT NOT NULL REFERENCES debates(id),
        loop        INTEGER NOT NULL,      -- 1-based
        kind        TEXT NOT NULL,         -- answer | post_action | review | response
        round       INTEGER NOT NULL,      -- 1-based for answers; 0 for the post-action turns
        side        INTEGER NOT NULL,      -- 0 | 1
        job_id      TEXT NOT NULL REFERENCES jobs(id),
        status      TEXT NOT NULL,         -- running | done | failed
        verdict     TEXT,                  -- answers: agree | disagree | partial (none without a previous round); review: approve | concerns
        position    TEXT,
        reasoning   TEXT,
        open_points TEXT,                  -- JSON array of strings
        text        TEXT,                  -- post-action and response: the agent's result; review: its notes
        error       TEXT,
        created_at  INTEGER NOT NULL,
        ended_at    INTEGER,
        PRIMARY KEY (debate_id, loop, kind, round, side)
      ) WITHOUT ROWID;
      CREATE INDEX debate_turns_job ON debate_turns(job_id);
    `,
  },
  {
    version: 22,
    name: 'merges: a finished worktree job merged into its target branch, by merge_branch or the merge queue (src/git/mergeJobs.ts)',
    up: `
      CREATE TABLE job_merges (
        id          INTEGER PRIMARY KEY,
        job_id      TEXT NOT NULL REFERENCES jobs(id),
        repo_root   TEXT NOT NULL,
        branch      TEXT NOT NULL,
        target      TEXT NOT NULL,     -- the branch merged into
        mode        TEXT NOT NULL,     -- merge | rebase | squash
        strategy    TEXT,              -- ours | theirs (git -X) or null
        commit_sha  TEXT NOT NULL,     -- the target's new tip
        previous    TEXT NOT NULL,     -- the target's tip before
        checks_json TEXT NOT NULL DEFAULT '[]', -- the command checks that passed on the merged result
        merged_at   INTEGER NOT NULL
      );
      CREATE INDEX job_merges_job ON job_merges(job_id);
    `,
  },
  {
    version: 23,
    name: 'provider limits: one breaker per provider account, so a hub restarted while a limit holds keeps waiting (src/limits, docs/limits.md)',
    up: `
      CREATE TABLE provider_limits (
        account    TEXT PRIMARY KEY,   -- <provider>|<endpoint>|<key hash> (src/limits/account.ts)
        provider   TEXT NOT NULL,      -- claude | codex
        endpoint   TEXT NOT NULL,      -- API base URL (or bedrock:/vertex:)
        key_hash   TEXT NOT NULL,      -- 12 hex digits of a SHA-256 over the credential: never the credential
        phase      TEXT NOT NULL,      -- closed | open | half_open
        kind       TEXT,               -- rate_limit | overloaded | usage_limit
        status     INTEGER,            -- HTTP status of the limit answer, when shown
        reason     TEXT,               -- the provider's words
        opened_at  INTEGER,            -- when this episode began
        until_at   INTEGER,            -- open: when one probe may go
        basis      TEXT,               -- retry_after | reset | backoff
        failures   INTEGER NOT NULL DEFAULT 0, -- openings in a row (the backoff's exponent)
        hits       INTEGER NOT NULL DEFAULT 0, -- limit answers this episode
        paused_json TEXT NOT NULL DEFAULT '[]', -- jobs whose child the limiter paused (SIGSTOP) at the limit
        updated_at INTEGER NOT NULL
      );
    `,
  },
  {
    version: 24,
    name: 'scripted runs: a run is a dispatch file or a script; a script run journals every call it makes, so a new hub continues it without running a call twice (src/scripts, docs/scripts.md)',
    up: `
      ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'dispatch'; -- dispatch | script
      CREATE TABLE script_calls (
        run_id       TEXT NOT NULL REFERENCES runs(id),
        seq          INTEGER NOT NULL,  -- issue order in the run, from 1 (ScriptReplay's occurrence rule, src/domain/scriptReplay.ts)
        kind         TEXT NOT NULL,     -- agent | approve | workflow
        args_json    TEXT NOT NULL,     -- canonical JSON of the call's arguments
        label        TEXT,              -- opts.label, or the first words of the prompt
        phase        TEXT,              -- opts.phase, else the last phase() before the call
        status       TEXT NOT NULL,     -- running | done | failed
        limited      INTEGER NOT NULL DEFAULT 0, -- failed on a provider limit: a resume runs it again without ending reuse
        job_id       TEXT,              -- the job that runs an agent() call
        request_id   TEXT,              -- the request of an approve() call
        outcome_json TEXT,              -- what the call returned (done) or the error it threw (failed)
        started_at   INTEGER NOT NULL,
        ended_at     INTEGER,
        PRIMARY KEY (run_id, seq)
      ) WITHOUT ROWID;
      CREATE INDEX script_calls_job ON script_calls(job_id);
      CREATE TABLE script_log (
        run_id  TEXT NOT NULL REFERENCES runs(id),
        n       INTEGER NOT NULL,       -- order in the run
        at      INTEGER NOT NULL,
        kind    TEXT NOT NULL,          -- log | phase | replay (a resume's note: where it diverged)
        text    TEXT NOT NULL,
        PRIMARY KEY (run_id, n)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 25,
    name: 'the end of a script run is told to the lead once, in wait_for_agents\' attention (src/services/runAttention.ts); runs that ended before this are taken as told',
    up: `
      ALTER TABLE runs ADD COLUMN lead_seen_at INTEGER;
      UPDATE runs SET lead_seen_at = COALESCE(ended_at, updated_at) WHERE status != 'running';
    `,
  },
  {
    version: 26,
    name: 'steering script runs: a run can be paused (no new call starts, across hubs), a resume marks the calls it no longer answers from, and a nested workflow() keys its calls under the call that ran it (src/scripts, docs/scripts.md)',
    up: `
      ALTER TABLE runs ADD COLUMN paused INTEGER NOT NULL DEFAULT 0; -- script runs: 1 while pause_run holds it
      ALTER TABLE script_calls ADD COLUMN scope TEXT NOT NULL DEFAULT ''; -- '' at the top; under workflow(): the path of workflow calls (ScriptRuns.scopeOf)
      ALTER TABLE script_calls ADD COLUMN replaced INTEGER NOT NULL DEFAULT 0; -- 1: a resume ran this call again or no longer asks it; history, never an answer
      ALTER TABLE script_calls ADD COLUMN source TEXT; -- workflow calls: the nested script as it ran
    `,
  },
  {
    version: 27,
    name: 'many hubs on one database: the hubs that serve the crew (heartbeats on the database\'s clock, clean stop, dead), the hub that owns each job, run, workflow and debate, and the commands another hub leaves for a job\'s owner (docs/store-plan.md §3.4–3.6; src/store/sql/hubs.ts)',
    up: `
      CREATE TABLE hubs (
        id           TEXT PRIMARY KEY,  -- random per process start (h-<hex>)
        host         TEXT NOT NULL,     -- os.hostname() of its machine
        pid          INTEGER NOT NULL,
        url          TEXT,              -- its HTTP endpoint, when it serves one
        state_dir    TEXT NOT NULL,
        version      TEXT NOT NULL,     -- overseer-mcp's version
        started_at   INTEGER NOT NULL,  -- ms since the epoch, all four on the database's clock
        heartbeat_at INTEGER NOT NULL,
        stopped_at   INTEGER,           -- stopped cleanly: never taken for dead
        dead_at      INTEGER            -- another hub found its heartbeat too old and reconciled it (once)
      );
      ALTER TABLE jobs ADD COLUMN hub_id TEXT;      -- the hub that runs it; NULL: any hub may claim it (queued)
      ALTER TABLE runs ADD COLUMN hub_id TEXT;      -- the hub that drives it; NULL: to be adopted
      ALTER TABLE workflows ADD COLUMN hub_id TEXT;
      ALTER TABLE debates ADD COLUMN hub_id TEXT;
      CREATE INDEX jobs_hub ON jobs(hub_id, status);
      CREATE TABLE job_commands (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        job_id     TEXT NOT NULL REFERENCES jobs(id),
        kind       TEXT NOT NULL CHECK (kind IN ('cancel', 'stop', 'freeze', 'thaw')),
        reason     TEXT,
        "by"       TEXT NOT NULL,       -- who asked: lead, a job id
        created_at INTEGER NOT NULL,    -- database clock, ms
        done_at    INTEGER,             -- the owner ran it (or it was closed when its owner died)
        outcome    TEXT                 -- what came of it, in words
      );
      CREATE INDEX job_commands_pending ON job_commands(job_id) WHERE done_at IS NULL;
    `,
  },
  {
    version: 28,
    name: 'nothing on SQLite: PostgreSQL\'s full-text columns and its kb_entries table (src/store/sql/pg28.ts); here the transcript index is FTS5 (12) and each knowledge base a file of its own (src/kb/store.ts)',
    up: '-- no change: version 28 is PostgreSQL\'s (one version sequence for both dialects)',
  },
  {
    version: 29,
    name: 'locks keyed by repository: a lock\'s key is (repo, rel_path) — the repository (and branch) that contains the file and the path inside it, or \'\' and the absolute path — so agents in two clones of one repository exclude each other (docs/decisions.md "Locks keyed by repository"); held locks keep their absolute key until the hub re-keys them at start',
    up: `
      CREATE TABLE locks_29 (
        repo        TEXT NOT NULL DEFAULT '',  -- <repository key>@<branch>, '' outside a shared repository
        rel_path    TEXT NOT NULL,             -- '/'-rooted path inside the work tree; the absolute path when repo is ''
        path        TEXT NOT NULL,             -- the holder's absolute real path (views, lock mounts, messages)
        holder      TEXT NOT NULL,
        reason      TEXT,
        ttl_s       INTEGER NOT NULL,
        acquired_at INTEGER NOT NULL,
        expires_at  INTEGER NOT NULL,
        PRIMARY KEY (repo, rel_path)
      );
      INSERT INTO locks_29 (repo, rel_path, path, holder, reason, ttl_s, acquired_at, expires_at)
        SELECT '', path, path, holder, reason, ttl_s, acquired_at, expires_at FROM locks;
      DROP TABLE locks;
      ALTER TABLE locks_29 RENAME TO locks;
      CREATE INDEX locks_holder ON locks(holder);
      CREATE INDEX locks_expiry ON locks(expires_at);
      CREATE INDEX locks_path ON locks(path);
      ALTER TABLE lock_waits ADD COLUMN keys_json TEXT;  -- [repo, rel_path] of each of paths_json (which stays the waiter's paths); NULL: keyed by the paths
    `,
  },
  {
    version: 30,
    name: 'worker hosts (issue 30, docs/workers-plan.md): one row per `overseer worker` name with its host, capacity, labels, CLIs and their versions, its heartbeat on the database\'s clock, the lease it holds (lease_ms) and the lease epoch that fences an older process under the same name',
    up: `
      CREATE TABLE workers (
        name         TEXT PRIMARY KEY,  -- --name, default the host name
        host         TEXT NOT NULL,     -- os.hostname() of its machine
        pid          INTEGER NOT NULL,
        capacity     INTEGER NOT NULL CHECK (capacity > 0),  -- children it runs at once
        labels_json  TEXT NOT NULL DEFAULT '[]',  -- placement labels (--labels a,b)
        clis_json    TEXT NOT NULL DEFAULT '{}',  -- {"claude": "<--version>", "codex": ...}: what it can run
        version      TEXT NOT NULL,     -- overseer-mcp's version
        lease_ms     INTEGER NOT NULL CHECK (lease_ms > 0),  -- a heartbeat older than this: the lease ended
        epoch        INTEGER NOT NULL,  -- lease epoch: +1 at each registration under this name
        state        TEXT NOT NULL CHECK (state IN ('live', 'stopped', 'lost')),
        started_at   INTEGER NOT NULL,  -- ms since the epoch, all on the database's clock
        heartbeat_at INTEGER NOT NULL,
        stopped_at   INTEGER,           -- stopped cleanly (SIGTERM)
        lost_at      INTEGER,           -- a hub found its lease ended and took its jobs back (once)
        hub_id       TEXT               -- its process's row in hubs once it runs agents (liveness, tokens, ownership of the jobs it claimed)
      );
    `,
  },
  {
    version: 31,
    name: 'roles (issue 31): a job\'s role — implementer, reviewer, planner or a role of .overseer/roles/ — and the role as it was resolved when the job was spawned, which the hook, the permission policy and the confinement enforce (src/roles, docs/decisions.md "Roles")',
    up: `
      ALTER TABLE jobs ADD COLUMN role TEXT;       -- NULL: implementer (jobs before roles)
      ALTER TABLE jobs ADD COLUMN role_json TEXT;  -- src/roles/role.ts RoleSpec; NULL: an implementer
    `,
  },
  {
    version: 32,
    name: 'send-backs: a worktree job whose merge failed (checks or a conflict) and, when it was sent back to its agent, how many rounds (src/branches/sendBack.ts, docs/decisions.md "Send back")',
    up: `
      CREATE TABLE job_send_backs (
        job_id       TEXT PRIMARY KEY REFERENCES jobs(id),
        round        INTEGER NOT NULL DEFAULT 0, -- times sent back to its agent
        max_rounds   INTEGER NOT NULL,           -- the bound (config sendBackRounds when it was first recorded)
        status       TEXT NOT NULL,              -- failed | out | merging | asked | merged | stopped
        reason       TEXT NOT NULL,              -- the last failure: checks_failed | conflict
        detail_json  TEXT NOT NULL,              -- {target, files?, failed_checks?}: what failed, bounded
        options_json TEXT NOT NULL,              -- the merge's options ({mode, strategy?, into?}): a re-merge uses them
        request_id   TEXT,                       -- the question to the person once the bound is reached
        updated_at   INTEGER NOT NULL
      );
    `,
  },
  {
    version: 33,
    name: 'the crew brief (issue 31): one standing text the lead or the person sets, in every new agent\'s first prompt and sent to the running ones when it changes; a hub-owned row no agent can write (src/brief, docs/floor.md "The crew brief")',
    up: `
      CREATE TABLE crew_brief (
        id       INTEGER PRIMARY KEY CHECK (id = 1), -- one brief per state
        text     TEXT,                                -- NULL: cleared
        set_by   TEXT NOT NULL,                       -- lead | person
        version  INTEGER NOT NULL,                    -- +1 at every set or clear
        set_at   INTEGER NOT NULL
      );
    `,
  },
  {
    version: 34,
    name: 'placement (issue 30, docs/workers-plan.md §2–§4): where a job runs — the hub\'s machine or the worker queue (pg-boss) — what its spawn asked (host, labels), its queue and queue job, the worker and lease epoch that claimed it, and the shared remote its worktree is fetched from and pushed to',
    up: `
      ALTER TABLE jobs ADD COLUMN placement TEXT;          -- NULL or 'hub': the hub's machine; 'queue': a worker takes it from queue_name
      ALTER TABLE jobs ADD COLUMN queue_name TEXT;         -- src/worker/placement.ts queueName(): att_<cli>[__h_<host hex>][__l_<labels>]
      ALTER TABLE jobs ADD COLUMN queue_id TEXT;           -- the pg-boss job of its current queued attempt
      ALTER TABLE jobs ADD COLUMN worker TEXT;             -- workers.name that runs (or ran) its current attempt
      ALTER TABLE jobs ADD COLUMN worker_epoch INTEGER;    -- that worker's lease epoch when it claimed the attempt
      ALTER TABLE jobs ADD COLUMN repo_remote TEXT;        -- the shared remote (the spawn's origin URL) a worker fetches the base from and pushes the branch to
      ALTER TABLE jobs ADD COLUMN place_host TEXT;         -- spawn_agent host: this worker only
      ALTER TABLE jobs ADD COLUMN place_labels_json TEXT;  -- the placement labels (labels without ':') a worker must all have; NULL: none
    `,
  },
];
