//! A query's results on the SQL Gateway (fetching results:
//! <https://nightlies.apache.org/flink/flink-docs-release-2.2/docs/dev/table/sql-gateway/rest/>):
//! the tables it reads are declared in the session first, the statement runs with `pipeline.name` =
//! the query's name, and the
//! result is paged with `…/result/{token}?rowFormat=JSON`: `NOT_READY` (nothing yet), `PAYLOAD`
//! (columns with their `logicalType`, rows with their kind `INSERT|UPDATE_BEFORE|UPDATE_AFTER|DELETE`,
//! a `nextResultUri`), `EOS` (the end of a bounded result). An HTTP 500 is the query's failure, its
//! root cause extracted. Closing cancels the job and the operation and closes the operation.

use super::http::Http;
use super::wire::{self, ErrorClass};
use super::{GatewayTarget, catalog};
use crate::results::value::{Column, quote_numbers, typed};
use crate::results::{Change, RowKind};
use crate::target::read::{Page, ResultStream};
use crate::target::{StatementSpec, TargetError};
use reqwest::Method;
use serde_json::Value;
use std::collections::BTreeMap;

/// The statement an `EXPLAIN` is about (`EXPLAIN STATEMENT SET …` as the `EXECUTE STATEMENT SET …` it
/// stands for), so that the tables it reads are declared; any other text as it is.
fn explained(sql: &str) -> String {
    let t = sql.trim_start();
    if !t
        .get(..7)
        .is_some_and(|h| h.eq_ignore_ascii_case("EXPLAIN"))
    {
        return sql.to_string();
    }
    let rest = t[7..].trim_start();
    if rest
        .get(..13)
        .is_some_and(|h| h.eq_ignore_ascii_case("STATEMENT SET"))
    {
        format!("EXECUTE {rest}")
    } else {
        rest.to_string()
    }
}

/// A result page as JSON, the numbers of its rows (`results.data`) kept as their exact text
/// ([`quote_numbers`]): the gateway writes a DECIMAL as a JSON number, and a `DECIMAL(38, 10)` does not
/// fit a double. The columns' types keep their numbers (precision, scale, length).
fn exact_page(text: &str) -> Value {
    #[derive(serde::Deserialize)]
    struct RawPage<'a> {
        #[serde(borrow)]
        results: Option<RawResults<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct RawResults<'a> {
        #[serde(borrow)]
        data: Option<&'a serde_json::value::RawValue>,
    }
    let mut page: Value = serde_json::from_str(text).unwrap_or(Value::Null);
    if let Ok(RawPage {
        results: Some(RawResults { data: Some(data) }),
    }) = serde_json::from_str::<RawPage>(text)
        && let Ok(exact) = serde_json::from_str::<Value>(&quote_numbers(data.get()))
        && let Some(results) = page.get_mut("results")
    {
        results["data"] = exact;
    }
    page
}

pub(super) struct GatewayQuery {
    http: Http,
    name: String,
    session: String,
    operation: String,
    /// The next result page (relative, with the version prefix), `None` after `EOS`.
    next: Option<String>,
    columns: Option<Vec<Column>>,
    job: Option<String>,
    closed: bool,
    /// The SQL that runs (for `EXPLAIN CHANGELOG_MODE`).
    sql: String,
    /// What `EXPLAIN CHANGELOG_MODE` said, once asked.
    append_only: Option<Option<bool>>,
}

impl GatewayTarget {
    /// Starts `spec.sql` as a query named `spec.name` (job parameters mark it as a query).
    pub(super) async fn open_query(
        &self,
        spec: &StatementSpec,
    ) -> Result<GatewayQuery, TargetError> {
        let refs = catalog::referenced_tables(&explained(&spec.sql));
        let mut config: BTreeMap<String, String> = spec.properties.clone();
        config.insert("pipeline.name".into(), spec.name.clone());
        config.insert(
            "pipeline.global-job-parameters".into(),
            format!(
                "{},{}:true",
                wire::job_parameters(
                    None,
                    &spec.name,
                    &wire::sql_hash(&spec.sql),
                    &wire::properties_hash(&spec.properties)
                ),
                wire::TAG_QUERY
            ),
        );
        match self.submit_query(&spec.sql, &refs, &config).await? {
            Ok((session, operation)) => Ok(GatewayQuery {
                http: self.http.clone(),
                name: spec.name.clone(),
                next: Some(format!(
                    "v2/sessions/{session}/operations/{operation}/result/0?rowFormat=JSON"
                )),
                session,
                operation,
                columns: None,
                job: None,
                closed: false,
                sql: spec.sql.clone(),
                append_only: None,
            }),
            Err(rejection) => Err(TargetError::Invalid(rejection.cause)),
        }
    }

    /// Whether a job is a query that has ended (FINISHED, FAILED, CANCELED): not a statement.
    pub(super) async fn is_ended_query(&self, job: &wire::JobOverview) -> bool {
        !wire::job_is_live(&job.state)
            && job.name.contains("-query-")
            && self.job_tag(&job.jid, wire::TAG_QUERY).await.as_deref() == Some("true")
    }
}

impl GatewayQuery {
    /// The root exception of this query's job (`GET /jobs/{id}/exceptions`), when the job failed:
    /// the job is the one learnt from a result page, else the newest job named after the query.
    async fn job_failure(&self) -> Option<String> {
        let jid = match &self.job {
            Some(j) => j.clone(),
            None => {
                let v = self.http.get(self.http.jm("jobs/overview")).await.ok()?;
                let jobs: Vec<wire::JobOverview> =
                    serde_json::from_value(v.get("jobs")?.clone()).ok()?;
                jobs.into_iter()
                    .filter(|j| j.name == self.name)
                    .max_by_key(|j| j.start_time)?
                    .jid
            }
        };
        let ex = self
            .http
            .get(self.http.jm(&format!("jobs/{jid}/exceptions")))
            .await
            .ok()?;
        wire::job_failure(&ex).filter(|c| !c.is_empty())
    }

    fn learn_columns(&mut self, page: &Value) {
        if self.columns.is_some() {
            return;
        }
        if let Some(cols) = page.pointer("/results/columns").and_then(Value::as_array) {
            self.columns = Some(
                cols.iter()
                    .map(|c| {
                        Column::from_type_object(
                            c["name"].as_str().unwrap_or("?"),
                            &c["logicalType"],
                        )
                    })
                    .collect(),
            );
        }
    }

    fn changes(&self, page: &Value) -> Result<Vec<Change>, TargetError> {
        let mut out = Vec::new();
        for d in page
            .pointer("/results/data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let kind_name = d["kind"].as_str().unwrap_or("INSERT");
            let kind = RowKind::from_name(kind_name).ok_or_else(|| {
                TargetError::Config(format!("query {}: unknown row kind {kind_name}", self.name))
            })?;
            let fields = d["fields"].as_array().cloned().unwrap_or_default();
            let row = fields
                .iter()
                .enumerate()
                .map(
                    |(i, v)| match self.columns.as_ref().and_then(|c| c.get(i)) {
                        Some(c) => typed(v, &c.type_name),
                        None => v.clone(),
                    },
                )
                .collect();
            out.push(Change { kind, row });
        }
        Ok(out)
    }
}

/// Whether the plan of `EXPLAIN CHANGELOG_MODE` produces only inserts: the changelog mode of its root
/// (the first line of `== Optimized Physical Plan ==`, e.g. `GroupAggregate(…, changelogMode=[I,UA])`)
/// is `[I]`. `None` when the text has no such line.
/// (<https://nightlies.apache.org/flink/flink-docs-stable/docs/dev/table/sql/explain/>)
pub fn plan_is_append_only(explain: &str) -> Option<bool> {
    let section = explain.split("== Optimized Physical Plan ==").nth(1)?;
    let root = section.lines().map(str::trim).find(|l| !l.is_empty())?;
    let at = root.rfind("changelogMode=[")? + "changelogMode=[".len();
    let modes = &root[at..at + root[at..].find(']')?];
    Some(modes.split(',').all(|m| m.trim() == "I"))
}

impl GatewayQuery {
    /// Runs `EXPLAIN CHANGELOG_MODE <sql>` in the query's session (its tables are declared there)
    /// and reads whether the result is append-only; `None` on any failure (the caller then reads
    /// to the stop condition). The explain operation is closed.
    async fn explain_append_only(&self) -> Option<bool> {
        let word = self.sql.split_whitespace().next()?.to_ascii_uppercase();
        if !matches!(word.as_str(), "SELECT" | "WITH" | "VALUES" | "(") {
            return None;
        }
        let sh = &self.session;
        let body = serde_json::json!({"statement": format!("EXPLAIN CHANGELOG_MODE {}", self.sql)});
        let v = self
            .http
            .send(
                Method::POST,
                self.http.gw(&format!("v2/sessions/{sh}/statements")),
                Some(&body),
            )
            .await
            .ok()?;
        let oh = v.get("operationHandle")?.as_str()?.to_string();
        let mut uri = Some(format!(
            "v2/sessions/{sh}/operations/{oh}/result/0?rowFormat=JSON"
        ));
        let mut text = String::new();
        let mut tries = 0;
        while let Some(u) = uri.take() {
            tries += 1;
            if tries > 100 {
                break;
            }
            let Ok(page) = self.http.get(self.http.gw(&u)).await else {
                break;
            };
            match page.get("resultType").and_then(Value::as_str) {
                Some("NOT_READY") => {
                    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                    uri = Some(u);
                }
                Some("PAYLOAD") => {
                    for d in page
                        .pointer("/results/data")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        if let Some(t) = d.pointer("/fields/0").and_then(Value::as_str) {
                            text.push_str(t);
                        }
                    }
                    uri = page
                        .get("nextResultUri")
                        .and_then(Value::as_str)
                        .map(|u| u.trim_start_matches('/').to_string());
                }
                _ => {}
            }
        }
        let _ = self
            .http
            .send(
                Method::DELETE,
                self.http
                    .gw(&format!("v2/sessions/{sh}/operations/{oh}/close")),
                None,
            )
            .await;
        plan_is_append_only(&text)
    }
}

#[async_trait::async_trait]
impl ResultStream for GatewayQuery {
    fn name(&self) -> &str {
        &self.name
    }

    async fn next_page(&mut self) -> Result<Page, TargetError> {
        let Some(uri) = self.next.clone() else {
            return Ok(Page {
                end: true,
                ..Page::default()
            });
        };
        let page = match self.http.get_text(self.http.gw(&uri)).await {
            Ok(text) => exact_page(&text),
            // An error answer on a result is the query's failure (the fetch of a failed statement
            // answers HTTP 500, observed on the service): the root cause.
            Err(e) if matches!(e.class, ErrorClass::ServerError | ErrorClass::SessionLost) => {
                // The gateway often says only "Failed to fetch next result": the job's own failure
                // (a missing topic, a bad record) is on the JobManager.
                let cause = e.cause();
                return Err(TargetError::Invalid(match self.job_failure().await {
                    Some(job) if !cause.contains(&job) => format!("{cause}; the job failed: {job}"),
                    _ => cause,
                }));
            }
            Err(e) => return Err(e.error),
        };
        match page.get("resultType").and_then(Value::as_str) {
            Some("NOT_READY") => Ok(Page::default()),
            Some("PAYLOAD") => {
                if let Some(j) = page.get("jobID").and_then(Value::as_str) {
                    self.job = Some(j.to_string());
                }
                self.learn_columns(&page);
                let changes = self.changes(&page)?;
                self.next = page
                    .get("nextResultUri")
                    .and_then(Value::as_str)
                    .map(|u| u.trim_start_matches('/').to_string());
                Ok(Page {
                    columns: self.columns.clone(),
                    upsert_key: None,
                    append_only: None,
                    changes,
                    end: self.next.is_none(),
                })
            }
            // EOS (or an unknown type): the result has ended.
            _ => {
                self.next = None;
                Ok(Page {
                    columns: self.columns.clone(),
                    end: true,
                    ..Page::default()
                })
            }
        }
    }

    async fn append_only(&mut self) -> Option<bool> {
        if self.append_only.is_none() {
            self.append_only = Some(self.explain_append_only().await);
        }
        self.append_only.flatten()
    }

    /// The operation's status (`GET …/operations/{op}/status`: `ERROR` is a failure) and, once a
    /// page named it, the job's state (`GET /jobs/{id}`: `FAILED` is a failure), with the job's
    /// root exception as the detail.
    async fn check_failed(&mut self) -> Result<(), TargetError> {
        let (sh, oh) = (&self.session, &self.operation);
        let op = self
            .http
            .get(
                self.http
                    .gw(&format!("v2/sessions/{sh}/operations/{oh}/status")),
            )
            .await
            .ok();
        let op_error = op
            .as_ref()
            .and_then(|v| v.get("status"))
            .and_then(Value::as_str)
            == Some("ERROR");
        let job_failed = match &self.job {
            Some(j) => {
                self.http
                    .get(self.http.jm(&format!("jobs/{j}")))
                    .await
                    .ok()
                    .and_then(|v| v.get("state").and_then(Value::as_str).map(str::to_string))
                    .as_deref()
                    == Some("FAILED")
            }
            None => false,
        };
        if !op_error && !job_failed {
            return Ok(());
        }
        let what = if job_failed {
            "job FAILED"
        } else {
            "operation ERROR"
        };
        Err(TargetError::Invalid(match self.job_failure().await {
            Some(detail) => format!("query {} failed ({what}): {detail}", self.name),
            None => format!("query {} failed ({what})", self.name),
        }))
    }

    async fn close(&mut self) -> Result<(), TargetError> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        let (sh, oh) = (&self.session, &self.operation);
        // The job of a streaming query runs until cancelled; a finished one answers an error,
        // which is fine.
        let mut job_error = None;
        if let Some(j) = &self.job {
            let url = self.http.jm(&format!("jobs/{j}?mode=cancel"));
            if let Err(e) = self.http.send(Method::PATCH, url, None).await
                && e.class == ErrorClass::Unavailable
            {
                job_error = Some(e.error);
            }
        }
        // Cancelling a finished operation answers 500 (observed on the service): ignored; closing
        // it frees it.
        let _ = self
            .http
            .send(
                Method::POST,
                self.http
                    .gw(&format!("v2/sessions/{sh}/operations/{oh}/cancel")),
                None,
            )
            .await;
        let _ = self
            .http
            .send(
                Method::DELETE,
                self.http
                    .gw(&format!("v2/sessions/{sh}/operations/{oh}/close")),
                None,
            )
            .await;
        match job_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::plan_is_append_only;

    #[test]
    fn the_root_of_the_physical_plan_tells_an_append_only_result() {
        let plan = |root: &str| {
            format!(
                "== Abstract Syntax Tree ==\nLogicalAggregate(group=[{{0}}])\n\n== Optimized Physical Plan ==\n{root}\n+- Exchange(distribution=[hash[k]], changelogMode=[I])\n\n== Optimized Execution Plan ==\nGroupAggregate(groupBy=[k])\n"
            )
        };
        assert_eq!(
            plan_is_append_only(&plan(
                "GroupAggregate(groupBy=[k], select=[k, COUNT(*) AS n], changelogMode=[I,UA])"
            )),
            Some(false)
        );
        assert_eq!(
            plan_is_append_only(&plan(
                "Calc(select=[k, x], where=[>(x, 1)], changelogMode=[I])"
            )),
            Some(true)
        );
        assert_eq!(
            plan_is_append_only(&plan(
                "Rank(rankType=[ROW_NUMBER], changelogMode=[I,UB,UA,D])"
            )),
            Some(false)
        );
        assert_eq!(plan_is_append_only("no plan here"), None);
    }
}
