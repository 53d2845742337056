-- The audit log is append-only: a wrong row is answered by a new one, never edited or removed.
CREATE OR REPLACE FUNCTION public.audit_log_append_only()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
	RAISE EXCEPTION 'the audit log is append-only (% refused)', TG_OP USING ERRCODE = 'restrict_violation';
END $function$;
CREATE TRIGGER audit_log_append_only BEFORE DELETE OR UPDATE ON audit_log FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();
