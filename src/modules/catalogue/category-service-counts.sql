-- Counts of active, not deleted services per category, kept by statement-level triggers so that
-- GET /categories and list totals read a few rows instead of counting services. A statement
-- that changes many services (the bulk seed) updates each category once.
CREATE OR REPLACE FUNCTION public.catalogue_count_services()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO category_service_counts (category_id, active_services)
      SELECT category_id, count(*) FROM new_rows WHERE status = 'active' AND deleted_at IS NULL GROUP BY category_id
      ON CONFLICT (category_id) DO UPDATE SET active_services = category_service_counts.active_services + excluded.active_services;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO category_service_counts (category_id, active_services)
      SELECT category_id, sum(delta) FROM (
        SELECT category_id, -1 AS delta FROM old_rows WHERE status = 'active' AND deleted_at IS NULL
        UNION ALL
        SELECT category_id, 1 FROM new_rows WHERE status = 'active' AND deleted_at IS NULL
      ) AS moves GROUP BY category_id HAVING sum(delta) <> 0
      ORDER BY category_id
      ON CONFLICT (category_id) DO UPDATE SET active_services = category_service_counts.active_services + excluded.active_services;
  ELSE
    UPDATE category_service_counts AS counts SET active_services = counts.active_services - gone.total
      FROM (SELECT category_id, count(*) AS total FROM old_rows WHERE status = 'active' AND deleted_at IS NULL GROUP BY category_id) AS gone
      WHERE counts.category_id = gone.category_id;
  END IF;
  RETURN NULL;
END $function$;
CREATE TRIGGER services_count_insert AFTER INSERT ON services REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_count_services();
CREATE TRIGGER services_count_update AFTER UPDATE ON services REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_count_services();
CREATE TRIGGER services_count_delete AFTER DELETE ON services REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION catalogue_count_services();
