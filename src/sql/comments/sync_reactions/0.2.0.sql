COMMENT ON TABLE syncular.sync_reactions IS
'Durable reactions (SPEC §6.9) planned by the reaction planner in the commit transaction and drained by claim_reactions / complete_reaction / fail_reaction: status pending, leased, completed or dead-letter, with leases, attempts and backoff. View: syncular.reactions.';
