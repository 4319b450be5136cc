//! A batch: the rows of some pages' items, converted for their columns, and
//! for each table the pages whose rows they replace. One batch is one
//! transaction in the database.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::schema::Cell;
use crate::parse::items::{Items, TableSchema};

/// Items in a batch that send it to the writer.
pub const BATCH_ITEMS: usize = 2_000;

/// Pages in a batch that send it to the writer, even with few items each (every
/// page costs a `DELETE` of its old rows).
pub const BATCH_PAGES: usize = 500;

/// One row of a table.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) page_url: Arc<str>,
    pub(crate) item_index: u32,
    pub(crate) fetched_at: DateTime<Utc>,
    /// One cell per field, in the table's column order.
    pub(crate) cells: Vec<Cell>,
}

/// What a batch does to one table.
#[derive(Debug, Default)]
pub(crate) struct TableBatch {
    /// Pages whose rows are deleted before [`TableBatch::rows`] go in.
    pub(crate) replace: Vec<Arc<str>>,
    /// The new rows.
    pub(crate) rows: Vec<Row>,
    replaced: HashSet<Arc<str>>,
}

/// Pages' items on their way to the database, per table (in schema order).
#[derive(Debug)]
pub(crate) struct Batch {
    pub(crate) tables: Vec<TableBatch>,
    pub(crate) pages: usize,
    pub(crate) items: usize,
}

/// A page's items that the tables have no place for: the rules that
/// extracted them and the schemas the sink was opened with disagree.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Unmapped {
    /// An item of a rule set without a table.
    #[error("rule set {0} has no table (it was not in the schemas)")]
    RuleSet(String),
    /// A field without a column in its rule set's table.
    #[error("table {table} has no column for field {field}")]
    Field { table: String, field: String },
}

/// Where a batch is built: the tables by name, and which columns already
/// warned about a value that did not fit.
#[derive(Debug)]
pub(crate) struct Layout {
    pub(crate) schemas: Vec<TableSchema>,
    by_name: HashMap<String, usize>,
    warned: HashSet<(usize, usize)>,
    /// Values stored as `NULL` because they did not fit their column.
    pub(crate) mismatched: u64,
}

impl Layout {
    pub(crate) fn new(schemas: Vec<TableSchema>) -> Layout {
        let by_name = schemas
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        Layout {
            schemas,
            by_name,
            warned: HashSet::new(),
            mismatched: 0,
        }
    }

    /// An empty batch for these tables.
    pub(crate) fn batch(&self) -> Batch {
        Batch {
            tables: self.schemas.iter().map(|_| TableBatch::default()).collect(),
            pages: 0,
            items: 0,
        }
    }

    fn table(&self, rule_set: &str) -> Result<usize, Unmapped> {
        self.by_name
            .get(rule_set)
            .copied()
            .ok_or_else(|| Unmapped::RuleSet(rule_set.to_string()))
    }

    /// Adds one page's items to `batch`: the page's rows in every rule set that
    /// matched it are replaced by these. Fails on a rule set or field the
    /// schemas do not have, before changing `batch`.
    pub(crate) fn add(
        &mut self,
        batch: &mut Batch,
        url: &str,
        items: &Items,
    ) -> Result<(), Unmapped> {
        let mut rows = Vec::with_capacity(items.records.len());
        let url: Arc<str> = Arc::from(url);
        for item in &items.records {
            let t = self.table(&item.rule_set)?;
            let cells = self.cells(t, &item.fields)?;
            let row = Row {
                page_url: Arc::clone(&url),
                item_index: item.index,
                fetched_at: items.fetched_at,
                cells,
            };
            rows.push((t, row));
        }
        let mut replace = Vec::with_capacity(items.rule_sets.len());
        for rule_set in &items.rule_sets {
            replace.push(self.table(rule_set)?);
        }
        // An item of a rule set the page did not list still replaces that set's rows.
        replace.extend(rows.iter().map(|(t, _)| *t));
        replace.sort_unstable();
        replace.dedup();
        for t in replace {
            let table = &mut batch.tables[t];
            if table.replaced.insert(Arc::clone(&url)) {
                table.replace.push(Arc::clone(&url));
            } else {
                // The page twice in one batch: its later items win.
                let before = table.rows.len();
                table.rows.retain(|r| r.page_url != url);
                batch.items -= before - table.rows.len();
            }
        }
        batch.items += rows.len();
        batch.pages += 1;
        for (t, row) in rows {
            batch.tables[t].rows.push(row);
        }
        Ok(())
    }

    /// The cells of one item in table `t`'s column order; a field the item lacks
    /// is `NULL`.
    fn cells(
        &mut self,
        t: usize,
        fields: &[(String, serde_json::Value)],
    ) -> Result<Vec<Cell>, Unmapped> {
        let schema = &self.schemas[t];
        if let Some((name, _)) = fields
            .iter()
            .find(|(name, _)| !schema.columns.iter().any(|c| &c.name == name))
        {
            return Err(Unmapped::Field {
                table: schema.name.clone(),
                field: name.clone(),
            });
        }
        let mut cells = Vec::with_capacity(schema.columns.len());
        for (c, column) in schema.columns.iter().enumerate() {
            // Fields come in column order, so the same position nearly always matches.
            let value = match fields.get(c) {
                Some((name, value)) if *name == column.name => Some(value),
                _ => fields
                    .iter()
                    .find(|(n, _)| *n == column.name)
                    .map(|(_, v)| v),
            };
            let Some(value) = value else {
                cells.push(Cell::Null);
                continue;
            };
            match Cell::convert(column.ty, value) {
                Some(cell) => cells.push(cell),
                None => {
                    self.mismatched += 1;
                    if self.warned.insert((t, c)) {
                        tracing::warn!(
                            table = %schema.name,
                            column = %column.name,
                            %value,
                            "a value does not fit its column's type ({:?}): stored as NULL \
                             (further ones in this column are only counted)",
                            column.ty
                        );
                    }
                    cells.push(Cell::Null);
                }
            }
        }
        Ok(cells)
    }
}

impl Batch {
    /// The batch as one batch per page, each with the page's URL, in the order
    /// the pages came: what is written, page by page, when the database refused
    /// the whole batch for one value, so that only that value's page is lost.
    pub(crate) fn into_pages(self) -> Vec<(Arc<str>, Batch)> {
        let width = self.tables.len();
        let mut pages: Vec<(Arc<str>, Batch)> = Vec::with_capacity(self.pages);
        let mut index: HashMap<Arc<str>, usize> = HashMap::with_capacity(self.pages);
        for (t, table) in self.tables.into_iter().enumerate() {
            for url in table.replace {
                let at = *index.entry(Arc::clone(&url)).or_insert_with(|| {
                    let empty = Batch {
                        tables: (0..width).map(|_| TableBatch::default()).collect(),
                        pages: 1,
                        items: 0,
                    };
                    pages.push((Arc::clone(&url), empty));
                    pages.len() - 1
                });
                pages[at].1.tables[t].replace.push(url);
            }
            for row in table.rows {
                // Every row's page is among its table's replaced pages.
                if let Some(&at) = index.get(&row.page_url) {
                    pages[at].1.items += 1;
                    pages[at].1.tables[t].rows.push(row);
                }
            }
        }
        pages
    }

    /// Whether the batch should go to the database now.
    pub(crate) fn is_full(&self) -> bool {
        self.items >= BATCH_ITEMS || self.pages >= BATCH_PAGES
    }

    /// Whether it holds no page.
    pub(crate) fn is_empty(&self) -> bool {
        self.pages == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::items::{Column, ColumnType, Item};
    use serde_json::json;

    fn layout() -> Layout {
        Layout::new(vec![TableSchema {
            name: "t".into(),
            columns: vec![
                Column {
                    name: "a".into(),
                    ty: ColumnType::Integer,
                },
                Column {
                    name: "b".into(),
                    ty: ColumnType::Text,
                },
            ],
        }])
    }

    fn items(n: u32, fields: Vec<(String, serde_json::Value)>) -> Items {
        Items {
            fetched_at: Utc::now(),
            records: (0..n)
                .map(|index| Item {
                    rule_set: "t".into(),
                    index,
                    fields: fields.clone(),
                })
                .collect(),
            rule_sets: vec!["t".into()],
            errors: vec![],
        }
    }

    #[test]
    fn fields_map_to_columns_and_misfits_become_null() {
        let mut layout = layout();
        let mut batch = layout.batch();
        let fields = vec![
            ("b".to_string(), json!("x")),
            ("a".to_string(), json!("nope")),
        ];
        layout
            .add(&mut batch, "http://h/", &items(1, fields))
            .unwrap();
        assert_eq!(
            batch.tables[0].rows[0].cells,
            [Cell::Null, Cell::Text("x".into())]
        );
        assert_eq!(layout.mismatched, 1);
        let unknown = vec![("c".to_string(), json!(1))];
        assert!(
            layout
                .add(&mut batch, "http://h/2", &items(1, unknown))
                .is_err()
        );
        assert_eq!(batch.pages, 1, "a refused page leaves the batch alone");
    }

    #[test]
    fn a_page_twice_in_a_batch_keeps_its_later_items() {
        let mut layout = layout();
        let mut batch = layout.batch();
        layout
            .add(&mut batch, "http://h/", &items(3, vec![]))
            .unwrap();
        layout
            .add(&mut batch, "http://h/", &items(1, vec![]))
            .unwrap();
        layout
            .add(&mut batch, "http://h/x", &items(0, vec![]))
            .unwrap();
        let table = &batch.tables[0];
        assert_eq!(table.rows.len(), 1);
        assert_eq!(batch.items, 1);
        assert_eq!(table.replace.len(), 2);
    }

    #[test]
    fn a_batch_splits_into_its_pages() {
        let mut layout = Layout::new(vec![layout().schemas[0].clone(), {
            let mut other = layout().schemas[0].clone();
            other.name = "u".into();
            other
        }]);
        let mut batch = layout.batch();
        let mut two_sets = items(2, vec![]);
        two_sets.records[1].rule_set = "u".into();
        two_sets.rule_sets.push("u".into());
        layout.add(&mut batch, "http://h/a", &two_sets).unwrap();
        layout
            .add(&mut batch, "http://h/b", &items(3, vec![]))
            .unwrap();
        layout
            .add(&mut batch, "http://h/c", &items(0, vec![]))
            .unwrap();
        let pages = batch.into_pages();
        let shape: Vec<(&str, usize, Vec<usize>, Vec<usize>)> = pages
            .iter()
            .map(|(url, b)| {
                (
                    &**url,
                    b.items,
                    b.tables.iter().map(|t| t.replace.len()).collect(),
                    b.tables.iter().map(|t| t.rows.len()).collect(),
                )
            })
            .collect();
        assert_eq!(
            shape,
            [
                ("http://h/a", 2, vec![1, 1], vec![1, 1]),
                ("http://h/b", 3, vec![1, 0], vec![3, 0]),
                ("http://h/c", 0, vec![1, 0], vec![0, 0]),
            ]
        );
        assert!(pages.iter().all(|(_, b)| b.pages == 1));
    }
}
