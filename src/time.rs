//! Calendar arithmetic on UTC times, in one place: days since the Unix epoch from a civil date and
//! back (Howard Hinnant's `days_from_civil` / `civil_from_days`, proleptic Gregorian calendar,
//! <https://howardhinnant.github.io/date_algorithms.html>), the `YYYY-MM-DD HH:MM:SS UTC` text of
//! reports and the RFC 3339 times Confluent Cloud answers with
//! (<https://www.rfc-editor.org/rfc/rfc3339>). Seconds are Unix seconds (`i64`, negative before
//! 1970); no time zone other than UTC and explicit `±hh:mm` offsets.

/// Days since 1970-01-01 of the civil date `y-m-d` (`m` 1–12, `d` 1–31; not range-checked: see
/// [`days_in_month`]).
pub fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date `(year, month 1–12, day 1–31)` of a count of days since 1970-01-01.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

/// Whether `y` is a leap year of the Gregorian calendar.
pub fn is_leap_year(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

/// The number of days of month `m` (1–12) of year `y`; `None` for a month outside 1–12.
pub fn days_in_month(y: i64, m: i64) -> Option<i64> {
    Some(match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap_year(y) => 29,
        2 => 28,
        _ => return None,
    })
}

/// `YYYY-MM-DD HH:MM:SS UTC` of Unix seconds (the `Generated on:` line, journals, locks, reports).
pub fn utc_timestamp(secs: i64) -> String {
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(secs.div_euclid(86_400));
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Unix seconds of an RFC 3339 UTC time (`2025-11-07T18:45:05.102478Z`, fraction and `Z` optional,
/// `T` or a space between date and time; an explicit offset `+hh:mm` is applied). `None` when it
/// does not read as one (a month outside 1–12, a day outside 1–31, an hour past 23, …).
pub fn parse_rfc3339(text: &str) -> Option<i64> {
    let t = text.trim();
    let (date, rest) = t.split_once(['T', ' '])?;
    let mut d = date.split('-');
    let y: i64 = d.next()?.parse().ok()?;
    let m: i64 = d.next()?.parse().ok()?;
    let day: i64 = d.next()?.parse().ok()?;
    let (clock, offset) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let clock = clock.split('.').next()?;
    let mut c = clock.split(':');
    let hh: i64 = c.next()?.parse().ok()?;
    let mm: i64 = c.next()?.parse().ok()?;
    let ss: i64 = c.next().unwrap_or("0").parse().ok()?;
    if !(1..=12).contains(&m) || !(1..=31).contains(&day) || hh > 23 || mm > 59 || ss > 60 {
        return None;
    }
    let offset_secs = match offset.chars().next() {
        Some('+') | Some('-') => {
            let sign = if offset.starts_with('-') { -1 } else { 1 };
            let (oh, om) = offset[1..].split_once(':').unwrap_or((&offset[1..], "0"));
            sign * (oh.parse::<i64>().ok()? * 3600 + om.parse::<i64>().ok()? * 60)
        }
        _ => 0,
    };
    Some(days_from_civil(y, m, day) * 86_400 + hh * 3600 + mm * 60 + ss - offset_secs)
}

/// Seconds since the epoch of an ISO timestamp (`2026-01-02T03:04:05.678Z`, `2026-01-02 03:04:05`).
pub fn epoch_seconds(s: &str) -> Option<f64> {
    let s = s.trim().trim_end_matches('Z');
    let (date, time) = s.split_once(['T', ' ']).unwrap_or((s, "00:00:00"));
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut t = time.split(':');
    let h: f64 = t.next()?.parse().ok()?;
    let mi: f64 = t.next().unwrap_or("0").parse().ok()?;
    let sec: f64 = t.next().unwrap_or("0").parse().ok()?;
    let days = days_from_civil(y, m, day);
    Some(days as f64 * 86400.0 + h * 3600.0 + mi * 60.0 + sec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_seconds_of_iso_timestamps() {
        assert_eq!(epoch_seconds("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(epoch_seconds("2000-03-01 00:00:01.5"), Some(951868801.5));
        assert_eq!(epoch_seconds("nope"), None);
    }

    /// Every day from 1600 to 2400 (leap centuries and all): the two directions agree, days follow
    /// one another, and each date is a valid one.
    #[test]
    fn civil_and_days_round_trip_every_day() {
        let first = days_from_civil(1600, 1, 1);
        let last = days_from_civil(2400, 12, 31);
        let mut prev = civil_from_days(first - 1);
        for days in first..=last {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days, "{y}-{m}-{d}");
            assert!(d >= 1 && d <= days_in_month(y, m).unwrap(), "{y}-{m}-{d}");
            let next_day = (y, m, d) == (prev.0, prev.1, prev.2 + 1);
            let next_month = d == 1 && (y, m) == (prev.0, prev.1 + 1);
            let next_year = (m, d) == (1, 1) && y == prev.0 + 1;
            assert!(
                next_day || next_month || next_year,
                "{prev:?} → {y}-{m}-{d}"
            );
            prev = (y, m, d);
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
    }

    #[test]
    fn timestamps() {
        assert_eq!(utc_timestamp(0), "1970-01-01 00:00:00 UTC");
        assert_eq!(
            utc_timestamp(1_709_164_800 + 3661),
            "2024-02-29 01:01:01 UTC"
        );
        assert_eq!(utc_timestamp(951_782_400), "2000-02-29 00:00:00 UTC");
        assert_eq!(utc_timestamp(1_748_779_199), "2025-06-01 11:59:59 UTC");
        assert_eq!(utc_timestamp(-1), "1969-12-31 23:59:59 UTC");
    }

    #[test]
    fn rfc3339_times() {
        assert_eq!(parse_rfc3339("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_rfc3339("2025-11-07T18:45:05.102478Z"),
            Some(1_762_541_105)
        );
        assert_eq!(
            parse_rfc3339("2025-11-07T20:45:05+02:00"),
            Some(1_762_541_105)
        );
        assert_eq!(parse_rfc3339("2025-13-07T18:45:05Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
        // Whatever second it names, a timestamp reads back as that second.
        for secs in (-86_400 * 365..86_400 * 365 * 60).step_by(86_400 * 7 + 3_601) {
            let text = utc_timestamp(secs)
                .replace(" UTC", "Z")
                .replacen(' ', "T", 1);
            assert_eq!(parse_rfc3339(&text), Some(secs), "{text}");
        }
    }

    #[test]
    fn month_lengths() {
        assert_eq!(days_in_month(2024, 2), Some(29));
        assert_eq!(days_in_month(1900, 2), Some(28));
        assert_eq!(days_in_month(2000, 2), Some(29));
        assert_eq!(days_in_month(2025, 4), Some(30));
        assert_eq!(days_in_month(2025, 13), None);
    }
}
