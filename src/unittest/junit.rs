//! JUnit XML for CI (the format Jenkins, GitLab and GitHub test reporters read): one `<testsuite>` per
//! table, one `<testcase>` per (test case, output) with `classname` = the table, a `<failure>` with the
//! differences for FAIL, an `<error>` for ERROR, written with `quick-xml` (escaping included).
//!
//! Test case names are unique in the file, as reporters key results by name: `<table>.<test
//! case>.<output table>` (`<table>.<test case>` for a case that failed before its outputs,
//! `<table>.setup`); two checks of one output (an expected CSV and a validation query) add the file
//! name, `<table>.<test case>.<output table>.<file>`, and any remaining repeat (two test cases of
//! the same name) gets `#2`, `#3`, ….

use super::run::{SuiteResult, Verdict};
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use std::collections::{BTreeMap, HashSet};

/// The JUnit XML of `suites`.
pub fn to_xml(suites: &[SuiteResult]) -> String {
    to_xml_named("flinkpipe unit tests", suites)
}

/// [`to_xml`] with `name` as the `<testsuites>` name (`pipeline test-live` writes its results
/// through this writer too: one suite per table, one case per test).
pub fn to_xml_named(name: &str, suites: &[SuiteResult]) -> String {
    let mut w = Writer::new_with_indent(Vec::new(), b' ', 2);
    let ev = |w: &mut Writer<Vec<u8>>, e: Event| w.write_event(e).expect("writing to memory");
    ev(
        &mut w,
        Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)),
    );
    let count = |s: &SuiteResult, v: Verdict| -> usize {
        s.cases
            .iter()
            .map(|c| {
                if c.outputs.is_empty() {
                    usize::from(c.result == v)
                } else {
                    c.outputs.iter().filter(|o| o.result == v).count()
                }
            })
            .sum::<usize>()
    };
    let tests = |s: &SuiteResult| -> usize {
        s.cases
            .iter()
            .map(|c| c.outputs.len().max(1))
            .sum::<usize>()
            + usize::from(s.error.is_some())
    };
    let total: usize = suites.iter().map(tests).sum();
    let failures: usize = suites.iter().map(|s| count(s, Verdict::Fail)).sum();
    let errors: usize = suites
        .iter()
        .map(|s| count(s, Verdict::Error) + usize::from(s.error.is_some()))
        .sum();
    let time: f64 = suites.iter().map(|s| s.seconds).sum();
    let mut root = BytesStart::new("testsuites");
    root.push_attribute(("name", name));
    root.push_attribute(("tests", total.to_string().as_str()));
    root.push_attribute(("failures", failures.to_string().as_str()));
    root.push_attribute(("errors", errors.to_string().as_str()));
    root.push_attribute(("time", format!("{time:.3}").as_str()));
    ev(&mut w, Event::Start(root));
    let mut used: HashSet<String> = HashSet::new();
    let mut unique = |name: String| -> String {
        let mut n = 1;
        let mut candidate = name.clone();
        while !used.insert(candidate.clone()) {
            n += 1;
            candidate = format!("{name}#{n}");
        }
        candidate
    };
    for s in suites {
        let mut suite = BytesStart::new("testsuite");
        suite.push_attribute(("name", s.table.as_str()));
        suite.push_attribute(("tests", tests(s).to_string().as_str()));
        suite.push_attribute(("failures", count(s, Verdict::Fail).to_string().as_str()));
        suite.push_attribute((
            "errors",
            (count(s, Verdict::Error) + usize::from(s.error.is_some()))
                .to_string()
                .as_str(),
        ));
        suite.push_attribute(("time", format!("{:.3}", s.seconds).as_str()));
        suite.push_attribute(("hostname", s.target.as_str()));
        ev(&mut w, Event::Start(suite));
        let case = |w: &mut Writer<Vec<u8>>,
                    name: &str,
                    time: f64,
                    verdict: Verdict,
                    message: &str,
                    body: &str| {
            let mut tc = BytesStart::new("testcase");
            tc.push_attribute(("classname", s.table.as_str()));
            tc.push_attribute(("name", name));
            tc.push_attribute(("time", format!("{time:.3}").as_str()));
            if verdict == Verdict::Pass {
                ev(w, Event::Empty(tc));
                return;
            }
            ev(w, Event::Start(tc));
            let tag = if verdict == Verdict::Fail {
                "failure"
            } else {
                "error"
            };
            let mut f = BytesStart::new(tag);
            f.push_attribute(("message", message));
            f.push_attribute(("type", verdict.as_str()));
            ev(w, Event::Start(f));
            ev(w, Event::Text(BytesText::new(body)));
            ev(w, Event::End(BytesEnd::new(tag)));
            ev(w, Event::End(BytesEnd::new("testcase")));
        };
        if let Some(e) = &s.error {
            let name = unique(format!("{}.setup", s.table));
            case(&mut w, &name, 0.0, Verdict::Error, e, e);
        }
        for c in &s.cases {
            if c.outputs.is_empty() {
                let e = c.error.clone().unwrap_or_default();
                let name = unique(format!("{}.{}", s.table, c.name));
                case(&mut w, &name, c.seconds, c.result, &e, &e);
                continue;
            }
            // Outputs checked more than once in this case (an expected CSV and a validation query).
            let mut checks: BTreeMap<&str, usize> = BTreeMap::new();
            for o in &c.outputs {
                *checks.entry(o.table.as_str()).or_default() += 1;
            }
            for o in &c.outputs {
                let message = match o.result {
                    Verdict::Pass => String::new(),
                    Verdict::Fail => format!(
                        "{} difference(s); expected {} row(s), got {}",
                        o.difference_count,
                        o.expected_rows.map_or("-".into(), |n| n.to_string()),
                        o.actual_rows.map_or("-".into(), |n| n.to_string())
                    ),
                    Verdict::Error => o.detail.clone().unwrap_or_default(),
                };
                let mut body = format!("{} ({})\n", o.file, o.table);
                for d in &o.differences {
                    body.push_str(d);
                    body.push('\n');
                }
                if let Some(d) = &o.detail {
                    body.push_str(d);
                    body.push('\n');
                }
                for line in &o.actual_csv {
                    body.push_str(line);
                    body.push('\n');
                }
                let mut name = format!("{}.{}.{}", s.table, c.name, o.table);
                if checks[o.table.as_str()] > 1 {
                    name.push('.');
                    name.push_str(o.file.rsplit('/').next().unwrap_or(&o.file));
                }
                let name = unique(name);
                case(&mut w, &name, o.seconds, o.result, &message, &body);
            }
        }
        ev(&mut w, Event::End(BytesEnd::new("testsuite")));
    }
    ev(&mut w, Event::End(BytesEnd::new("testsuites")));
    let mut s = String::from_utf8(w.into_inner()).expect("UTF-8 in, UTF-8 out");
    s.push('\n');
    s
}
