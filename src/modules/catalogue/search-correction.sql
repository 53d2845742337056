-- The correction of a search's misspelt words, decided inside the search's own statement: each word
-- (three to forty letters or digits, the first eight) replaced by its three nearest words of the
-- lexicon (search_words, trigram distance) that are at least 0.2 similar, or-ed, the words and-ed; null
-- when no word has a near one.
CREATE OR REPLACE FUNCTION public.catalogue_search_correction(search text)
 RETURNS tsquery
 LANGUAGE sql
 STABLE PARALLEL SAFE
AS $function$
  SELECT to_tsquery('english', string_agg(per_word.alternatives, ' & ' ORDER BY per_word.position))
  FROM (
    SELECT wanted.position, '(' || string_agg(quote_literal(nearest.word), ' | ') || ')' AS alternatives
    FROM (
      SELECT split.word AS input, min(split.n) AS position
      FROM regexp_split_to_table(lower(search), '[^a-z0-9]+') WITH ORDINALITY AS split(word, n)
      WHERE length(split.word) BETWEEN 3 AND 40
      GROUP BY split.word
      ORDER BY min(split.n)
      LIMIT 8
    ) AS wanted
    CROSS JOIN LATERAL (
      SELECT closest.word FROM (
        SELECT w.word, similarity(w.word, wanted.input) AS score FROM search_words w
        ORDER BY w.word <-> wanted.input
        LIMIT 3
      ) AS closest
      WHERE closest.score >= 0.2
    ) AS nearest
    GROUP BY wanted.position
  ) AS per_word
$function$;
