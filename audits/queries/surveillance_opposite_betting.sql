-- Opposite betting and shared rounds: pairs of accounts, tested over a period covering a business date: every flagged test, then the 20 strongest others.
-- Parameters:
--   $date  business date, YYYY-MM-DD
-- Source: the opposite_betting view (tests that ran: a p-value, sample >= min_sample); flagged first, then by q-value and
-- p-value. currency: opposite_betting's currency (a pair is tested per currency; money is in its minor units); null on
-- shared_rounds, a summary row and a row loaded before the column: money is in the currency named in detail.
SELECT detector, account_a, account_b, currency, period, flagged, q_value, p_value, statistic, sample, effect, money, detail
FROM opposite_betting
WHERE tested AND CAST($date AS DATE) BETWEEN period_start AND business_date
QUALIFY flagged OR row_number() OVER (ORDER BY flagged DESC, q_value, p_value, detector, subject, period, statistic, currency) <= 20
ORDER BY flagged DESC, q_value, p_value, detector, subject, period, statistic, currency
