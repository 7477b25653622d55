-- Dealer anomalies: findings, results, favoured accounts, wheel signatures, tested over a period covering a business date: every flagged test, then the 20 strongest others.
-- Parameters:
--   $date  business date, YYYY-MM-DD
-- Source: the dealer_anomalies view (tests that ran: a p-value, sample >= min_sample); flagged first, then by q-value and
-- p-value. currency: dealer_result's currency (a dealer is tested per currency; money is in its minor units); null on
-- the other tests and on rows loaded before the column: money is in the currency named in detail.
SELECT detector, dealer_id, account_id, wheel, currency, period, flagged, q_value, p_value, statistic, sample, effect, money, detail
FROM dealer_anomalies
WHERE tested AND CAST($date AS DATE) BETWEEN period_start AND business_date
QUALIFY flagged OR row_number() OVER (ORDER BY flagged DESC, q_value, p_value, detector, subject, period, statistic, currency) <= 20
ORDER BY flagged DESC, q_value, p_value, detector, subject, period, statistic, currency
