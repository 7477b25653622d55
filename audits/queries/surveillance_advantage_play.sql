-- Advantage play: accounts, tested over a period covering a business date: every flagged test, then the 20 strongest others.
-- Parameters:
--   $date  business date, YYYY-MM-DD
-- Source: the advantage_play view (tests that ran: a p-value, sample >= min_sample); flagged first, then by q-value and
-- p-value. currency: the currency of the account's bets tested (an account is tested per bet family and currency;
-- money is in its minor units); null on a row loaded before the column: money is in the currency named in detail.
SELECT detector, account_id, currency, period, flagged, q_value, p_value, statistic, sample, effect, money, detail
FROM advantage_play
WHERE tested AND CAST($date AS DATE) BETWEEN period_start AND business_date
QUALIFY flagged OR row_number() OVER (ORDER BY flagged DESC, q_value, p_value, detector, subject, period, statistic, currency) <= 20
ORDER BY flagged DESC, q_value, p_value, detector, subject, period, statistic, currency
