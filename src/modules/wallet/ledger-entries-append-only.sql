-- Ledger entries are append-only: a correction is a new transaction, never an edit.
CREATE OR REPLACE FUNCTION public.ledger_entries_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	RAISE EXCEPTION 'ledger entries are append-only (% refused)', TG_OP USING ERRCODE = 'restrict_violation';
END $function$;
CREATE TRIGGER ledger_entries_append_only BEFORE DELETE OR UPDATE ON ledger_entries FOR EACH ROW EXECUTE FUNCTION ledger_entries_append_only();
CREATE TRIGGER ledger_entries_no_truncate BEFORE TRUNCATE ON ledger_entries FOR EACH STATEMENT EXECUTE FUNCTION ledger_entries_append_only();
