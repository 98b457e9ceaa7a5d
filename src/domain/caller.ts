// Who is calling: the lead (its token, <state>/lead.token) or the agent of a live job (the
// token made for that job's attempt). The HTTP endpoint works it out from the bearer token;
// tools, services and routes decide with it what the caller may do.
export type Caller = { role: 'lead' } | { role: 'agent'; jobId: string };
