-- Advantage play: accounts, tested over a period covering a business date: every flagged test, then the 20 strongest others.
-- Parameters:
--   $date  business date, YYYY-MM-DD
-- Source: the advantage_play view (tests that ran: a p-value, sample >= min_sample); flagged first, then by q-value and
-- p-value. money is in minor units of the currency named in detail.
SELECT detector, account_id, period, flagged, q_value, p_value, statistic, sample, effect, money, detail
FROM advantage_play
WHERE tested AND CAST($date AS DATE) BETWEEN period_start AND business_date
QUALIFY flagged OR row_number() OVER (ORDER BY flagged DESC, q_value, p_value, detector, subject, period, statistic) <= 20
ORDER BY flagged DESC, q_value, p_value, detector, subject, period, statistic
