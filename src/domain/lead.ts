// Whose lead (docs/decisions.md "Steering across hubs"): with several hubs on one PostgreSQL
// database there is a lead on each, so the lead's identity as a lock holder and as the recipient of
// agents' messages is per hub: `lead@<hub id>`. On SQLite (one hub per database) it stays `lead`.
// Messages from the lead keep `lead` as their sender (agents answer "lead", which reaches their own hub's lead).

/** The lead of one hub. */
export const LEAD = 'lead';

/** The lead of hub `hubId` as a lock holder and an inbox: `lead` when the database has one hub only. */
export function leadOf(hubId: string, manyHubs: boolean): string {
  return manyHubs ? `${LEAD}@${hubId}` : LEAD;
}

/** Whether a lock holder or a message's recipient is a lead (of any hub). */
export function isLead(who: string): boolean {
  return who === LEAD || who.startsWith(`${LEAD}@`);
}

/** The hub whose lead `who` is (undefined for the plain `lead` and for agents). */
export function leadHub(who: string): string | undefined {
  return who.startsWith(`${LEAD}@`) ? who.slice(LEAD.length + 1) : undefined;
}
