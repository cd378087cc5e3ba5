//! A query's results on Confluent Cloud
//! (<https://docs.confluent.io/cloud/current/api.html#tag/Statement-Results-(sqlv1)>): the
//! statement's traits give the columns (`status.traits.schema.columns`, or the older
//! `status.result_schema.columns`) and
//! the upsert key (`upsert_columns`); `GET …/statements/{name}/results` pages through rows whose `op`
//! (absent = 0) is `+I -U +U -D`; `409` means not ready yet; a RUNNING statement always answers with a
//! `next`; an absent or empty `next` after COMPLETED is the end. Closing deletes the statement.

use super::{ConfluentTarget, next_link};
use crate::results::value::{Column, typed};
use crate::results::{Change, RowKind};
use crate::target::read::{Page, ResultStream};
use crate::target::{Phase, TargetError};
use reqwest::{Method, StatusCode};
use serde_json::Value;

/// Empty pages between two reads of the statement's phase (a statement that FAILED or was stopped
/// after RUNNING answers results pages without rows).
const PHASE_CHECK_EVERY: u32 = 5;

pub(super) struct ConfluentQuery {
    target: ConfluentTarget,
    name: String,
    columns: Option<Vec<Column>>,
    upsert: Option<Vec<usize>>,
    /// `status.traits.is_append_only`.
    append_only: Option<bool>,
    /// The `metadata.next` link of the last page, as given (resolved against the page's URL).
    next: Option<reqwest::Url>,
    empty_pages: u32,
    closed: bool,
}

impl ConfluentQuery {
    pub(super) fn new(target: ConfluentTarget, name: &str) -> Self {
        ConfluentQuery {
            target,
            name: name.to_string(),
            columns: None,
            upsert: None,
            append_only: None,
            next: None,
            empty_pages: 0,
            closed: false,
        }
    }

    /// The statement as JSON, its phase and detail.
    async fn statement(&self) -> Result<(Phase, String, Value), TargetError> {
        let url = self.target.statement_url(&self.name);
        let a = self.target.send_retrying(Method::GET, &url, None).await?;
        if a.status == StatusCode::NOT_FOUND {
            return Err(TargetError::Config(format!(
                "query {}: the statement was deleted while it ran",
                self.name
            )));
        }
        if !a.status.is_success() {
            return Err(self.target.fail(&Method::GET, &url, &a));
        }
        let v: Value = serde_json::from_str(&a.body).unwrap_or(Value::Null);
        let phase = Phase::parse(
            v.pointer("/status/phase")
                .and_then(Value::as_str)
                .unwrap_or(""),
        );
        let detail = v
            .pointer("/status/detail")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        Ok((phase, detail, v))
    }

    /// Columns and upsert key from the statement's traits, once RUNNING or COMPLETED.
    fn learn_schema(&mut self, statement: &Value) {
        let status = &statement["status"];
        let columns = status
            .pointer("/traits/schema/columns")
            .or_else(|| status.pointer("/result_schema/columns"))
            .and_then(Value::as_array);
        if let Some(cols) = columns {
            self.columns = Some(
                cols.iter()
                    .map(|c| {
                        Column::from_type_object(c["name"].as_str().unwrap_or("?"), &c["type"])
                    })
                    .collect(),
            );
        }
        self.append_only = status
            .pointer("/traits/is_append_only")
            .and_then(Value::as_bool);
        self.upsert = status
            .pointer("/traits/upsert_columns")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|i| i.as_u64().map(|i| i as usize))
                    .collect()
            })
            .filter(|v: &Vec<usize>| !v.is_empty());
    }

    fn typed_row(&self, row: &[Value]) -> Vec<Value> {
        row.iter()
            .enumerate()
            .map(
                |(i, v)| match self.columns.as_ref().and_then(|c| c.get(i)) {
                    Some(c) => typed(v, &c.type_name),
                    None => v.clone(),
                },
            )
            .collect()
    }
}

#[async_trait::async_trait]
impl ResultStream for ConfluentQuery {
    fn name(&self) -> &str {
        &self.name
    }

    async fn next_page(&mut self) -> Result<Page, TargetError> {
        if self.columns.is_none() {
            let (phase, detail, v) = self.statement().await?;
            match phase {
                Phase::Failed | Phase::Failing => {
                    return Err(TargetError::Invalid(if detail.is_empty() {
                        format!("query {} FAILED", self.name)
                    } else {
                        format!("query {} FAILED: {detail}", self.name)
                    }));
                }
                Phase::Running | Phase::Completed => {
                    self.learn_schema(&v);
                    if self.columns.is_none() {
                        // A query always has a schema once it runs: one without is not a query.
                        self.columns = Some(Vec::new());
                    }
                }
                _ => return Ok(Page::default()),
            }
        }
        let mut url = self.target.statement_url(&self.name);
        url.path_segments_mut()
            .expect("http url has path segments")
            .push("results");
        if let Some(next) = &self.next {
            url = next.clone();
        }
        let a = self.target.send_retrying(Method::GET, &url, None).await?;
        if a.status == StatusCode::CONFLICT {
            return Ok(Page::default());
        }
        if !a.status.is_success() {
            return Err(self.target.fail(&Method::GET, &url, &a));
        }
        let v: Value = serde_json::from_str(&a.body).unwrap_or(Value::Null);
        let mut changes = Vec::new();
        for d in v
            .pointer("/results/data")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let op = d.get("op").and_then(Value::as_u64);
            let Some(kind) = RowKind::from_op(op) else {
                return Err(TargetError::Config(format!(
                    "query {}: unknown change op {}",
                    self.name,
                    op.unwrap_or_default()
                )));
            };
            let row = d
                .get("row")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            changes.push(Change {
                kind,
                row: self.typed_row(&row),
            });
        }
        let next = v.pointer("/metadata/next").and_then(Value::as_str);
        let end = match next_link(&self.target.statement_url(&self.name), &url, next)? {
            Some(u) => {
                self.next = Some(u);
                false
            }
            None => true,
        };
        if changes.is_empty() && !end {
            self.empty_pages += 1;
            if self.empty_pages.is_multiple_of(PHASE_CHECK_EVERY) {
                let (phase, detail, _) = self.statement().await?;
                match phase {
                    Phase::Failed | Phase::Failing => {
                        return Err(TargetError::Invalid(if detail.is_empty() {
                            format!("query {} FAILED", self.name)
                        } else {
                            format!("query {} FAILED: {detail}", self.name)
                        }));
                    }
                    Phase::Stopped => {
                        return Ok(Page {
                            end: true,
                            ..Page::default()
                        });
                    }
                    _ => {}
                }
            }
        }
        Ok(Page {
            columns: self.columns.clone(),
            upsert_key: self.upsert.clone(),
            append_only: self.append_only,
            changes,
            end,
        })
    }

    async fn check_failed(&mut self) -> Result<(), TargetError> {
        let (phase, detail, _) = self.statement().await?;
        match phase {
            Phase::Failed | Phase::Failing => Err(TargetError::Invalid(if detail.is_empty() {
                format!("query {} FAILED", self.name)
            } else {
                format!("query {} FAILED: {detail}", self.name)
            })),
            _ => Ok(()),
        }
    }

    async fn close(&mut self) -> Result<(), TargetError> {
        if self.closed {
            return Ok(());
        }
        self.closed = true;
        // Retried through 429s and 5xx for a bounded time: a query left running costs money.
        self.target
            .remove_within(&self.name, super::CLEANUP_WITHIN)
            .await
            .map(|_| ())
    }
}
