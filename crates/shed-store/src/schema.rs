//! Each app's components and columns as the store knows them, whatever the
//! backend: the platform's own components, an app's catalog
//! ([`AppSchema`]), the checks of an app name and of a vocabulary, and the
//! readers' cache of catalogs. What both backends' catalogs share is
//! written here once — the catalog's statements, a catalog read from its
//! rows, what a declare changes ([`declared`]) and its refusal, where each
//! column is stored ([`Shape`], [`Group`], [`Place`]) and the shape tables
//! made the first time a shape is used ([`ensure_shape`]); each backend
//! says only its column types and indexes its own way (`sqlite/schema.rs`,
//! `postgres/schema.rs`). A declare writes catalog rows only: an app's
//! rows live in the shape tables every app shares
//! (`docs/decisions/hosted-store-layout.md`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::names::{RESERVED, is_app_name, is_word};
use crate::txn::{Txn, args};
use crate::{ColumnType, StoreError, Vocabulary};
use shed_words::STORE_COLUMNS;

/// The most columns a component may have: a declare naming more is
/// refused. A group holds at most one declare's new columns of one
/// component, each kind's count rounded up to its class (1, 2, 4, …), so
/// this bounds a shape table's slots, and its indexes with them, to 120
/// (33 texts, 17 refs, 9 numbers, 5 bools: 64 + 32 + 16 + 8).
pub const MAX_COLUMNS_PER_COMPONENT: usize = 64;

/// The most components an app's vocabulary may declare: a declare naming
/// more is refused. Each is a group at least, and a join a line may make.
pub const MAX_COMPONENTS_PER_APP: usize = 64;

/// The most shape tables a store makes, whatever its apps declare: past
/// it a group of a shape not made goes to groups of shapes made. It
/// counts the shapes a store can always make (`Shape::kept`), so a place
/// always exists. Relations stay at most this many tables and their
/// indexes (`docs/decisions/hosted-store-layout.md`).
pub const MAX_SHAPES: usize = 256;

/// The most apps' catalogs a store keeps in memory (each of its catalog
/// caches: the readers', and on SQLite the writer's): past it, keeping one
/// more forgets one kept, so a server that reaches every app of a hosted
/// store holds this many, not one an app. A catalog forgotten is read again
/// at its app's next call (one indexed read of a few catalog rows).
pub const MAX_CACHED_CATALOGS: usize = 4096;

/// Inserts `value` into a catalog cache, first forgetting one entry (any)
/// when it holds [`MAX_CACHED_CATALOGS`].
pub(crate) fn keep_bounded<V>(cache: &mut HashMap<String, V>, app: String, value: V) {
    if cache.len() >= MAX_CACHED_CATALOGS
        && !cache.contains_key(&app)
        && let Some(forgotten) = cache.keys().next().cloned()
    {
        cache.remove(&forgotten);
    }
    cache.insert(app, value);
}

/// The components every app knows without declaring them.
pub(crate) fn platform_components() -> Vec<Component> {
    vec![
        Component::unplaced(
            "doc",
            vec![
                ("title".into(), ColumnType::Text),
                ("body".into(), ColumnType::Text),
            ],
        ),
        Component::unplaced("comment", vec![("target".into(), ColumnType::Ref)]),
    ]
}

/// The kinds of slot a shape table has, by the type stored, in the order a
/// shape's name lists them: `t` text and urls, `r` refs (an eid), `n`
/// numbers, `b` bools, `d` times.
const KINDS: [(char, ColumnType); 5] = [
    ('t', ColumnType::Text),
    ('r', ColumnType::Ref),
    ('n', ColumnType::Number),
    ('b', ColumnType::Bool),
    ('d', ColumnType::Time),
];

/// The kind of slot (its place in [`KINDS`]) a column of type `ty` takes.
fn kind(ty: ColumnType) -> usize {
    match ty {
        ColumnType::Text | ColumnType::Url => 0,
        ColumnType::Ref => 1,
        ColumnType::Number => 2,
        ColumnType::Bool => 3,
        ColumnType::Time => 4,
    }
}

/// A shape table's columns: how many slots of each kind ([`KINDS`]), each
/// count a class (0, 1, 2, 4, 8, …), so apps share a few tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Shape([u32; 5]);

impl Shape {
    /// The smallest shape holding columns of these types.
    pub(crate) fn holding(types: impl IntoIterator<Item = ColumnType>) -> Shape {
        let mut counts = [0u32; 5];
        for ty in types {
            counts[kind(ty)] += 1;
        }
        Shape(counts.map(|n| if n == 0 { 0 } else { n.next_power_of_two() }))
    }

    /// The shapes of one slot (`t1r0n0b0d0`, …), one a kind: every column
    /// fits a group of one of them, so a store at [`MAX_SHAPES`] always has
    /// a place for a new group.
    fn one_slot() -> impl Iterator<Item = Shape> {
        (0..KINDS.len()).map(|k| {
            let mut counts = [0; 5];
            counts[k] = 1;
            Shape(counts)
        })
    }

    /// The shapes a store can always make, whatever [`MAX_SHAPES`] says:
    /// the one-slot shapes and those of the platform's components (`doc`'s
    /// title and body stay in one group: [`doc_slots`]).
    fn kept() -> Vec<Shape> {
        let mut kept: Vec<Shape> = Shape::one_slot().collect();
        for c in platform_components() {
            let shape = Shape::holding(c.columns.iter().map(|(_, ty)| *ty));
            if !kept.contains(&shape) {
                kept.push(shape);
            }
        }
        kept
    }

    /// How many slots it has.
    fn width(&self) -> u32 {
        self.0.iter().sum()
    }

    /// `t2r0n1b0d0`: its row in `ec_shapes`.
    pub(crate) fn name(&self) -> String {
        KINDS
            .iter()
            .zip(self.0)
            .map(|((k, _), n)| format!("{k}{n}"))
            .collect()
    }

    /// The shape a name in `ec_shapes` says.
    pub(crate) fn parse(name: &str) -> Result<Shape, StoreError> {
        let bad = || StoreError::Internal(format!("{name} is not a shape in the catalog"));
        let mut counts = [0u32; 5];
        let mut rest = name;
        for (i, (k, _)) in KINDS.iter().enumerate() {
            rest = rest.strip_prefix(*k).ok_or_else(bad)?;
            let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
            counts[i] = rest[..digits].parse().map_err(|_| bad())?;
            rest = &rest[digits..];
        }
        if !rest.is_empty() || !counts.iter().all(|n| *n == 0 || n.is_power_of_two()) {
            return Err(bad());
        }
        Ok(Shape(counts))
    }

    /// The SQL name of the table of this shape.
    pub(crate) fn table(&self) -> String {
        format!("ec_rows_{}", self.name())
    }

    /// Every slot, in order: its name (`t0`) and the type its column is made as.
    fn slots(&self) -> impl Iterator<Item = (String, ColumnType)> + '_ {
        KINDS
            .iter()
            .zip(self.0)
            .flat_map(|((k, ty), n)| (0..n).map(move |i| (format!("{k}{i}"), *ty)))
    }

    /// The slots of a kind, `t0`, `t1`, … as many as the shape has.
    fn slots_of(&self, kind: usize) -> impl Iterator<Item = String> + '_ {
        (0..self.0[kind]).map(move |i| format!("{}{i}", KINDS[kind].0))
    }
}

/// One of a component's column groups: a row of its shape's table holds
/// the group's columns of an entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    /// Its row in `ec_groups`: the `grp` of its rows.
    pub id: i64,
    pub shape: Shape,
}

impl Group {
    /// The SQL name of the table its rows are in.
    pub(crate) fn table(&self) -> String {
        self.shape.table()
    }
}

/// Where a column is stored: its group (an index in [`Component::groups`])
/// and its slot of that group's shape (`t0`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Place {
    pub group: usize,
    pub slot: String,
}

/// A component and its typed columns, in declared order, and where they
/// are stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Component {
    pub name: String,
    pub columns: Vec<(String, ColumnType)>,
    /// Its column groups, the home group first — its row is what says an
    /// entity wears the component; none for a component not in the catalog.
    pub groups: Vec<Group>,
    /// Each column's place, in `columns`' order (empty with no groups).
    pub places: Vec<Place>,
}

impl Component {
    /// A component as a vocabulary names it, not stored anywhere yet.
    fn unplaced(name: &str, columns: Vec<(String, ColumnType)>) -> Component {
        Component {
            name: name.into(),
            columns,
            groups: Vec::new(),
            places: Vec::new(),
        }
    }

    /// The column's place, if the component has it.
    pub(crate) fn place(&self, column: &str) -> Option<&Place> {
        self.position(column).and_then(|(i, _)| self.places.get(i))
    }

    /// The home group: its row says an entity wears the component.
    pub(crate) fn home(&self) -> Result<&Group, StoreError> {
        self.groups.first().ok_or_else(|| {
            StoreError::Internal(format!("the component {} has no group", self.name))
        })
    }

    pub(crate) fn column(&self, name: &str) -> Option<ColumnType> {
        self.position(name).map(|(_, t)| t)
    }

    /// The column's place among the component's columns, and its type.
    pub(crate) fn position(&self, name: &str) -> Option<(usize, ColumnType)> {
        self.columns
            .iter()
            .enumerate()
            .find(|(_, (c, _))| c == name)
            .map(|(i, (_, t))| (i, *t))
    }

    /// `jog has no column mile — it has who, miles, at`
    pub(crate) fn no_column(&self, column: &str) -> StoreError {
        let has: Vec<&str> = self.columns.iter().map(|(c, _)| c.as_str()).collect();
        let has = if has.is_empty() {
            "none".to_string()
        } else {
            has.join(", ")
        };
        StoreError::refused(format!(
            "{} has no column {column} — it has {has}",
            self.name
        ))
    }
}

/// One app's catalog as the store holds it.
#[derive(Clone, Debug)]
pub(crate) struct AppSchema {
    /// The app's name as given (`jeff/runs`).
    pub name: String,
    /// Its row in `ec_apps`; `None` for an app never declared nor written.
    pub id: Option<i64>,
    pub components: Vec<Component>,
}

impl AppSchema {
    pub(crate) fn component(&self, name: &str) -> Option<&Component> {
        self.components.iter().find(|c| c.name == name)
    }

    /// The catalog of an app never declared nor written: the platform's
    /// components only.
    pub(crate) fn unknown(app: &str) -> AppSchema {
        AppSchema {
            name: app.to_string(),
            id: None,
            components: platform_components(),
        }
    }

    /// App `id`'s catalog from its rows, each in its `position` order: its
    /// components' names, and every column as (component, name, type).
    pub(crate) fn from_catalog(
        app: &str,
        id: i64,
        components: Vec<String>,
        groups: Vec<CatalogGroup>,
        columns: Vec<CatalogColumn>,
    ) -> Result<AppSchema, StoreError> {
        let mut components: Vec<Component> = components
            .into_iter()
            .map(|name| Component::unplaced(&name, Vec::new()))
            .collect();
        for (component, group, shape) in groups {
            if let Some(c) = components.iter_mut().find(|c| c.name == component) {
                c.groups.push(Group {
                    id: group,
                    shape: Shape::parse(&shape)?,
                });
            }
        }
        for (component, column, ty, group, slot) in columns {
            let ty = ColumnType::from_word(&ty).ok_or_else(|| {
                StoreError::Internal(format!("unknown column type {ty} in the catalog"))
            })?;
            if let Some(c) = components.iter_mut().find(|c| c.name == component) {
                let group = c.groups.iter().position(|g| Some(g.id) == group);
                let (Some(group), Some(slot)) = (group, slot) else {
                    return Err(StoreError::Internal(format!(
                        "{component}.{column} has no place in the catalog"
                    )));
                };
                c.columns.push((column, ty));
                c.places.push(Place { group, slot });
            }
        }
        Ok(AppSchema {
            name: app.to_string(),
            id: Some(id),
            components,
        })
    }
}

/// The slots of `doc`'s title and body, both in its home group (the
/// platform makes `doc` with both, and a vocabulary cannot add to it).
pub(crate) fn doc_slots(doc: &Component) -> Result<(&str, &str), StoreError> {
    let slot = |column: &str| {
        doc.place(column)
            .filter(|p| p.group == 0)
            .map(|p| p.slot.as_str())
            .ok_or_else(|| StoreError::Internal(format!("doc.{column} is not in its home group")))
    };
    Ok((slot("title")?, slot("body")?))
}

/// A group as the catalog keeps it: (component, id, shape).
pub(crate) type CatalogGroup = (String, i64, String);

/// A column as the catalog keeps it: (component, name, type, group, slot).
pub(crate) type CatalogColumn = (String, String, String, Option<i64>, Option<String>);

/// What declaring a vocabulary changes in an app's catalog, in the order to
/// make it: a component, a column, or a column's type (allowed only while
/// the column holds no value: [`holds_values`]). A column or component the
/// vocabulary no longer names is kept with its data.
pub(crate) enum Declared<'v> {
    Component(&'v str, &'v [(String, ColumnType)]),
    Column(&'v str, &'v str, ColumnType),
    Retype(&'v str, &'v str, ColumnType, ColumnType),
}

/// The changes declaring `vocab` makes to the catalog `current` (checked
/// first: [`check_vocabulary`]).
pub(crate) fn declared<'v>(current: &AppSchema, vocab: &'v Vocabulary) -> Vec<Declared<'v>> {
    let mut changes = Vec::new();
    for (name, columns) in &vocab.components {
        let Some(existing) = current.component(name) else {
            changes.push(Declared::Component(name, columns));
            continue;
        };
        for (column, ty) in columns {
            match existing.column(column) {
                None => changes.push(Declared::Column(name, column, *ty)),
                Some(old) if old == *ty => {}
                Some(old) => changes.push(Declared::Retype(name, column, old, *ty)),
            }
        }
    }
    changes
}

/// The refusal of a new type for a column that holds values of `old`.
pub(crate) fn holds_values(component: &str, column: &str, old: ColumnType) -> StoreError {
    StoreError::refused(format!(
        "{component}.{column} holds {} — add a new column rather than change its type",
        old.plural()
    ))
}

/// What each backend's DDL says its own way about the shape tables; the
/// rest of the DDL, and every change of the catalog, is written once below.
pub(crate) trait Tables: Txn {
    /// The SQL type of a row's group and id.
    const KEY: &'static str;
    /// What ends a shape table's `CREATE TABLE` (SQLite's `WITHOUT ROWID`:
    /// the table is the tree of its key).
    const SHAPE_TABLE: &'static str;
    /// What locks the shapes made until the transaction ends, so two
    /// servers count them ([`MAX_SHAPES`]) in turn; none on SQLite, whose
    /// one writer takes declares in turn anyway.
    const LOCK_SHAPES: Option<&'static str>;
    /// The SQL type of a slot holding a column of type `ty`.
    fn column_type(ty: ColumnType) -> &'static str;
    /// What follows `CREATE INDEX <index> ON <table>` for the index of
    /// `slot`, holding columns of type `ty`: led by the group, so every
    /// walk of it stays inside one app's component.
    fn slot_index(slot: &str, ty: ColumnType) -> String;
    /// What the planner is told of a new shape table `table` whose slots'
    /// indexes are `indexes`, before any row (SQLite's `sqlite_stat1`
    /// rows; nothing on PostgreSQL, whose statistics its own `ANALYZE`
    /// keeps).
    fn planner_hints(table: &str, indexes: &[String]) -> String;
}

/// The statement that answers the id of the app `$1` names.
pub(crate) const APP_ID: &str = "SELECT id FROM ec_apps WHERE name = $1";

/// Reads an app's catalog; an unknown app has the platform's components only.
pub(crate) async fn load(t: &impl Txn, app: &str) -> Result<AppSchema, StoreError> {
    match t.optional(APP_ID, args![app]).await? {
        Some(row) => load_known(t, app, row.get(0)?).await,
        None => Ok(AppSchema::unknown(app)),
    }
}

/// Reads the catalog of an app whose row id is known.
pub(crate) async fn load_known(t: &impl Txn, app: &str, id: i64) -> Result<AppSchema, StoreError> {
    let sql = "SELECT name FROM ec_components WHERE app = $1 ORDER BY position";
    let components = t
        .all(sql, args![id])
        .await?
        .iter()
        .map(|r| r.get(0))
        .collect::<Result<_, _>>()?;
    let sql =
        "SELECT component, id, shape FROM ec_groups WHERE app = $1 ORDER BY component, position";
    let groups = t
        .all(sql, args![id])
        .await?
        .iter()
        .map(|r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .collect::<Result<_, StoreError>>()?;
    let sql =
        "SELECT component, name, type, grp, slot FROM ec_columns WHERE app = $1 ORDER BY position";
    let columns = t
        .all(sql, args![id])
        .await?
        .iter()
        .map(|r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)))
        .collect::<Result<_, StoreError>>()?;
    AppSchema::from_catalog(app, id, components, groups, columns)
}

/// The app data version; 0 for an app never written.
pub(crate) async fn data_version(t: &impl Txn, app: &str) -> Result<u64, StoreError> {
    let sql = "SELECT version FROM ec_apps WHERE name = $1";
    let version: Option<i64> = t
        .optional(sql, args![app])
        .await?
        .map(|r| r.get(0))
        .transpose()?;
    Ok(version.unwrap_or(0) as u64)
}

/// Makes what a new app `id` has before any declare: the platform's
/// components.
pub(crate) async fn make_app(t: &impl Tables, id: i64) -> Result<(), StoreError> {
    for c in platform_components() {
        add_component(t, id, &c.name, &c.columns).await?;
    }
    Ok(())
}

/// Extends the catalog of the app `app`, of row id `id`, with what its
/// vocabulary needs ([`declared`]): catalog rows only, and a shape's table
/// the first time any app uses the shape.
pub(crate) async fn declare(
    t: &impl Tables,
    app: &str,
    id: i64,
    vocab: &Vocabulary,
) -> Result<(), StoreError> {
    let current = load_known(t, app, id).await?;
    let changes = declared(&current, vocab);
    if changes.is_empty() {
        return Ok(());
    }
    // A retype is refused, before anything is written, while the column
    // holds a value.
    for change in &changes {
        if let Declared::Retype(name, column, old, _) = change {
            let component = current
                .component(name)
                .ok_or_else(|| StoreError::Internal(format!("no component {name}")))?;
            let (place, group) = component
                .place(column)
                .and_then(|p| Some((p, component.groups.get(p.group)?)))
                .ok_or_else(|| StoreError::Internal(format!("{name}.{column} has no place")))?;
            let holds = format!(
                "SELECT EXISTS(SELECT 1 FROM {} WHERE grp = $1 AND {} IS NOT NULL)",
                group.table(),
                place.slot
            );
            if t.one(&holds, args![group.id]).await?.get::<bool>(0)? {
                return Err(holds_values(name, column, *old));
            }
        }
    }
    // Where each column added or retyped goes, component by component.
    let mut placed: HashMap<&str, Vec<(i64, String)>> = HashMap::new();
    for component in &current.components {
        let wanted: Vec<ColumnType> = changes
            .iter()
            .filter_map(|change| match change {
                Declared::Column(name, _, ty) | Declared::Retype(name, _, _, ty)
                    if *name == component.name =>
                {
                    Some(*ty)
                }
                _ => None,
            })
            .collect();
        if !wanted.is_empty() {
            let places = place_columns(t, id, component, &wanted).await?;
            placed.insert(component.name.as_str(), places);
        }
    }
    for change in changes {
        match change {
            Declared::Component(name, columns) => add_component(t, id, name, columns).await?,
            Declared::Column(name, column, ty) => {
                let (group, slot) = next_place(&mut placed, name)?;
                add_to_catalog(t, id, name, column, ty, group, &slot).await?;
            }
            Declared::Retype(name, column, _, ty) => {
                let (group, slot) = next_place(&mut placed, name)?;
                let sql = "UPDATE ec_columns SET type = $1, grp = $2, slot = $3 WHERE app = $4 AND component = $5 AND name = $6";
                t.execute(sql, args![ty.as_str(), group, slot, id, name, column])
                    .await?;
            }
        }
    }
    changed_catalog(t, id).await
}

/// The next place [`place_columns`] found for a column of `component`.
fn next_place(
    placed: &mut HashMap<&str, Vec<(i64, String)>>,
    component: &str,
) -> Result<(i64, String), StoreError> {
    let places = placed.get_mut(component).filter(|p| !p.is_empty());
    places.map(|p| p.remove(0)).ok_or_else(|| {
        StoreError::Internal(format!("no place was found for a column of {component}"))
    })
}

/// Places for new columns of an existing component, of these types in
/// order, as (group id, slot): each in a free slot of its kind in the
/// component's last group, while there is one (a slot no column names —
/// one a retype left holds no value); those left over together in a new
/// group of their own shape, or groups of shapes made ([`add_groups`]).
/// No row moves.
async fn place_columns(
    t: &impl Tables,
    app: i64,
    component: &Component,
    types: &[ColumnType],
) -> Result<Vec<(i64, String)>, StoreError> {
    let last = component.groups.len().checked_sub(1);
    let mut taken: Vec<String> = component
        .places
        .iter()
        .filter(|p| Some(p.group) == last)
        .map(|p| p.slot.clone())
        .collect();
    let mut places: Vec<Option<(i64, String)>> = Vec::with_capacity(types.len());
    for ty in types {
        let free = last.and_then(|g| {
            let group = &component.groups[g];
            let slot = group
                .shape
                .slots_of(kind(*ty))
                .find(|s| !taken.contains(s))?;
            Some((group.id, slot))
        });
        if let Some((_, slot)) = &free {
            taken.push(slot.clone());
        }
        places.push(free);
    }
    let left: Vec<ColumnType> = types
        .iter()
        .zip(&places)
        .filter(|(_, p)| p.is_none())
        .map(|(ty, _)| *ty)
        .collect();
    if !left.is_empty() {
        let position = component.groups.len();
        let mut added = add_groups(t, app, &component.name, position, &left).await?;
        added.reverse();
        for place in places.iter_mut().filter(|p| p.is_none()) {
            *place = added.pop();
        }
    }
    places
        .into_iter()
        .map(|p| p.ok_or_else(|| StoreError::Internal("a column was left without a slot".into())))
        .collect()
}

/// The slots of a new group of `shape` for columns of these types, in order.
fn fresh_slots(shape: Shape, types: &[ColumnType]) -> Vec<String> {
    let mut used = [0usize; 5];
    types
        .iter()
        .map(|ty| {
            let k = kind(*ty);
            used[k] += 1;
            shape.slots_of(k).nth(used[k] - 1).unwrap_or_default()
        })
        .collect()
}

/// The groups holding columns of these types when the store may not make
/// their shape: shapes of `made` (or [`Shape::kept`]) taken greedily, each
/// the one holding most of the columns left, the narrowest of those (the
/// first of equals) — so
/// the narrowest shape holding them all when one does. Each group's shape
/// and the columns (indexes in `types`) it holds, in order.
fn fit(made: &[Shape], types: &[ColumnType]) -> Vec<(Shape, Vec<usize>)> {
    let mut candidates: Vec<Shape> = Shape::kept();
    candidates.extend(made.iter().filter(|s| !Shape::kept().contains(s)));
    let mut left: Vec<usize> = (0..types.len()).collect();
    let mut groups = Vec::new();
    while !left.is_empty() {
        let held = |shape: &Shape| -> Vec<usize> {
            let mut room = shape.0;
            left.iter()
                .copied()
                .filter(|&i| {
                    let k = kind(types[i]);
                    let fits = room[k] > 0;
                    room[k] -= u32::from(fits);
                    fits
                })
                .collect()
        };
        let best = candidates
            .iter()
            .map(|shape| (held(shape), *shape))
            .min_by(|(a, x), (b, y)| b.len().cmp(&a.len()).then(x.width().cmp(&y.width())));
        let Some((taken, shape)) = best else { break };
        left.retain(|i| !taken.contains(i));
        groups.push((shape, taken));
    }
    groups
}

/// The shapes of the groups holding columns of these types: their own
/// shape ([`Shape::holding`]) when made, or when the store may still make
/// it (fewer than [`MAX_SHAPES`] made, counting the kept shapes as made);
/// else shapes made ([`fit`]). Made here, each once. The count is taken
/// under `Tables::LOCK_SHAPES`, so servers making shapes at once count in
/// turn.
async fn shapes_for<T: Tables>(
    t: &T,
    types: &[ColumnType],
) -> Result<Vec<(Shape, Vec<usize>)>, StoreError> {
    let wanted = Shape::holding(types.iter().copied());
    let all = || vec![(wanted, (0..types.len()).collect())];
    let known = "SELECT name FROM ec_shapes WHERE name = $1";
    if t.optional(known, args![wanted.name()]).await?.is_some() {
        return Ok(all());
    }
    if let Some(lock) = T::LOCK_SHAPES {
        t.batch(lock).await?;
    }
    let made = t
        .all("SELECT name FROM ec_shapes", args![])
        .await?
        .iter()
        .map(|r| Shape::parse(&r.get::<String>(0)?))
        .collect::<Result<Vec<Shape>, StoreError>>()?;
    let kept = Shape::kept();
    let others = made.iter().filter(|s| !kept.contains(s)).count();
    let groups = if kept.contains(&wanted) || others + kept.len() < MAX_SHAPES {
        all()
    } else {
        fit(&made, types)
    };
    for (shape, _) in &groups {
        ensure_shape(t, *shape).await?;
    }
    Ok(groups)
}

/// Adds groups holding new columns of these types to a component of app
/// `app`, the first at `position` (0: its home group), each of the shape
/// [`shapes_for`] says: each column's (group id, slot), in order.
async fn add_groups(
    t: &impl Tables,
    app: i64,
    component: &str,
    position: usize,
    types: &[ColumnType],
) -> Result<Vec<(i64, String)>, StoreError> {
    let mut places: Vec<Option<(i64, String)>> = vec![None; types.len()];
    for (n, (shape, held)) in shapes_for(t, types).await?.into_iter().enumerate() {
        let group = add_group(t, app, component, position + n, shape).await?;
        let held_types: Vec<ColumnType> = held.iter().map(|&i| types[i]).collect();
        for (i, slot) in held.into_iter().zip(fresh_slots(shape, &held_types)) {
            places[i] = Some((group, slot));
        }
    }
    places
        .into_iter()
        .map(|p| p.ok_or_else(|| StoreError::Internal("a column was left without a slot".into())))
        .collect()
}

/// Notes a change of app `id`'s catalog: a writer's copy of it read
/// before is read again (`sqlite/schema.rs`).
async fn changed_catalog(t: &impl Txn, id: i64) -> Result<(), StoreError> {
    let sql = "UPDATE ec_apps SET catalog = catalog + 1 WHERE id = $1";
    t.execute(sql, args![id]).await.map(drop)
}

/// Adds a component to app `id`'s catalog, at the next position, with its
/// home group holding every column — or, when the store may not make its
/// shape, groups of shapes made ([`add_groups`]). (`$n` stand in the order of their
/// first use, so SQLite, which reads `$1` as a name, binds them by
/// position too.)
async fn add_component(
    t: &impl Tables,
    id: i64,
    name: &str,
    columns: &[(String, ColumnType)],
) -> Result<(), StoreError> {
    let sql = "INSERT INTO ec_components(app, name, position)
        VALUES($1, $2, (SELECT COUNT(*) FROM ec_components WHERE app = $1))";
    t.execute(sql, args![id, name]).await?;
    let types: Vec<ColumnType> = columns.iter().map(|(_, ty)| *ty).collect();
    let places = add_groups(t, id, name, 0, &types).await?;
    for ((column, ty), (group, slot)) in columns.iter().zip(places) {
        add_to_catalog(t, id, name, column, *ty, group, &slot).await?;
    }
    changed_catalog(t, id).await
}

/// Adds a group of `shape`, whose table is made, to a component of app
/// `app`, at `position` (0: its home group): its id.
async fn add_group(
    t: &impl Txn,
    app: i64,
    component: &str,
    position: usize,
    shape: Shape,
) -> Result<i64, StoreError> {
    let sql = "INSERT INTO ec_groups(app, component, shape, position) VALUES($1, $2, $3, $4) RETURNING id";
    t.one(sql, args![app, component, shape.name(), position as i64])
        .await?
        .get(0)
}

/// Makes the table of `shape` and its indexes, unless made before. Its
/// row in `ec_shapes` is written first: a second server making the same
/// shape at once waits on that row until the first commits, then finds
/// the table made.
pub(crate) async fn ensure_shape<T: Tables>(t: &T, shape: Shape) -> Result<(), StoreError> {
    let name = shape.name();
    let known = "SELECT name FROM ec_shapes WHERE name = $1";
    if t.optional(known, args![name.as_str()]).await?.is_some() {
        return Ok(());
    }
    let sql = "INSERT INTO ec_shapes(name) VALUES($1) ON CONFLICT DO NOTHING";
    t.execute(sql, args![name.as_str()]).await?;
    let table = shape.table();
    let key = T::KEY;
    let mut columns = format!("grp {key} NOT NULL, id {key} NOT NULL");
    let mut indexes = String::new();
    let mut names = Vec::new();
    for (slot, ty) in shape.slots() {
        columns.push_str(&format!(", {slot} {}", T::column_type(ty)));
        let index = format!("{table}.{slot}");
        indexes.push_str(&format!(
            "CREATE INDEX IF NOT EXISTS \"{index}\" ON {table}{};\n",
            T::slot_index(&slot, ty)
        ));
        names.push(index);
    }
    t.batch(&format!(
        "CREATE TABLE IF NOT EXISTS {table}({columns}, PRIMARY KEY(grp, id)){};\n{indexes}{}",
        T::SHAPE_TABLE,
        T::planner_hints(&table, &names)
    ))
    .await
}

/// Adds a column to app `id`'s catalog, at the next position, in `slot`
/// of the group `group`.
async fn add_to_catalog(
    t: &impl Txn,
    id: i64,
    component: &str,
    column: &str,
    ty: ColumnType,
    group: i64,
    slot: &str,
) -> Result<(), StoreError> {
    let sql = "INSERT INTO ec_columns(app, component, name, type, position, grp, slot)
        VALUES($1, $2, $3, $4, (SELECT COUNT(*) FROM ec_columns WHERE app = $1), $5, $6)";
    t.execute(sql, args![id, component, column, ty.as_str(), group, slot])
        .await?;
    Ok(())
}

/// Makes the shape tables of an app whose catalog rows are already
/// written (`shed migrate` copies them from SQLite).
pub(crate) async fn create_tables(t: &impl Tables, schema: &AppSchema) -> Result<(), StoreError> {
    for group in schema.components.iter().flat_map(|c| &c.groups) {
        ensure_shape(t, group.shape).await?;
    }
    Ok(())
}

/// The catalog cache readers use; the writer always reads its own transaction.
#[derive(Default)]
pub(crate) struct Schemas {
    /// (generation, cache): a load that raced a change is not kept.
    cache: Mutex<(u64, HashMap<String, Arc<AppSchema>>)>,
}

impl Schemas {
    /// The app's catalog from the cache, or else the generation the cache
    /// is at (`None` when it cannot be read).
    pub(crate) fn cached(&self, app: &str) -> Result<Arc<AppSchema>, Option<u64>> {
        match self.cache.lock() {
            Ok(cache) => match cache.1.get(app) {
                Some(s) => Ok(s.clone()),
                None => Err(Some(cache.0)),
            },
            Err(_) => Err(None),
        }
    }

    /// The app's catalog from the cache, or else read with `t` and kept —
    /// unless a change came meanwhile (the generation moved).
    pub(crate) async fn read(&self, t: &impl Txn, app: &str) -> Result<Arc<AppSchema>, StoreError> {
        let generation = match self.cached(app) {
            Ok(schema) => return Ok(schema),
            Err(generation) => generation,
        };
        let schema = Arc::new(load(t, app).await?);
        if let Ok(mut cache) = self.cache.lock()
            && Some(cache.0) == generation
        {
            keep_bounded(&mut cache.1, schema.name.clone(), schema.clone());
        }
        Ok(schema)
    }

    /// How many apps' catalogs the cache holds.
    #[cfg(test)]
    pub(crate) fn kept(&self) -> usize {
        self.cache.lock().map(|cache| cache.1.len()).unwrap_or(0)
    }

    /// Drops what the cache holds for an app whose catalog may have changed.
    pub(crate) fn forget(&self, app: &str) {
        if let Ok(mut cache) = self.cache.lock() {
            cache.0 += 1;
            cache.1.remove(app);
        }
    }
}

/// `jeff/Runs is not an app name — …`
pub(crate) fn check_app_name(app: &str) -> Result<(), StoreError> {
    if is_app_name(app) {
        Ok(())
    } else {
        Err(StoreError::refused(format!(
            "{app} is not an app name — an app is <space>/<slug>, like jeff/runs"
        )))
    }
}

/// Checks that declaring `vocab` keeps app `id`'s catalog within
/// [`MAX_COMPONENTS_PER_APP`] and [`MAX_COLUMNS_PER_COMPONENT`], counting
/// what it keeps from earlier declares (a component or column a
/// vocabulary no longer names stays, with its data) with what `vocab`
/// adds. A declare's only, as [`check_vocabulary`].
pub(crate) async fn check_growth(
    t: &impl Txn,
    app: &str,
    id: i64,
    vocab: &Vocabulary,
) -> Result<(), StoreError> {
    let current = load_known(t, app, id).await?;
    let platform = platform_components();
    let kept = current
        .components
        .iter()
        .filter(|c| !platform.iter().any(|p| p.name == c.name))
        .count();
    let added = vocab
        .components
        .iter()
        .filter(|(name, _)| current.component(name).is_none())
        .count();
    if kept + added > MAX_COMPONENTS_PER_APP {
        return Err(StoreError::refused(format!(
            "{app} would have {} components, {kept} of them kept from earlier deploys; an app may have at most {MAX_COMPONENTS_PER_APP} — split it into two apps",
            kept + added
        )));
    }
    for (name, columns) in &vocab.components {
        let Some(existing) = current.component(name) else {
            continue;
        };
        let kept = existing.columns.len();
        let added = columns
            .iter()
            .filter(|(column, _)| existing.column(column).is_none())
            .count();
        if kept + added > MAX_COLUMNS_PER_COMPONENT {
            return Err(StoreError::refused(format!(
                "{name} would have {} columns, {kept} of them kept from earlier deploys; a component may have at most {MAX_COLUMNS_PER_COMPONENT} — split it into two components",
                kept + added
            )));
        }
    }
    Ok(())
}

/// Checks the vocabulary app `app` declares — its names, and its
/// components and columns within [`MAX_COMPONENTS_PER_APP`] and
/// [`MAX_COLUMNS_PER_COMPONENT`] — before anything is created. A declare's
/// only: a store's upgrade places the apps it holds however many.
pub(crate) fn check_vocabulary(app: &str, vocab: &Vocabulary) -> Result<(), StoreError> {
    let platform = platform_components();
    let components = vocab.components.len();
    if components > MAX_COMPONENTS_PER_APP {
        return Err(StoreError::refused(format!(
            "{app} declares {components} components; an app may have at most {MAX_COMPONENTS_PER_APP} — split it into two apps"
        )));
    }
    for (i, (name, columns)) in vocab.components.iter().enumerate() {
        if !is_word(name) {
            return Err(StoreError::refused(format!(
                "{name} is not a component name — use a-z, 0-9 and _, starting with a letter, up to 40 characters"
            )));
        }
        if RESERVED.contains(&name.as_str()) {
            return Err(StoreError::refused(format!(
                "{name} is a word the store uses itself — name the component otherwise"
            )));
        }
        if vocab.components[..i].iter().any(|(n, _)| n == name) {
            return Err(StoreError::refused(format!(
                "{name} is declared twice — declare each component once"
            )));
        }
        if let Some(p) = platform.iter().find(|p| &p.name == name)
            && !columns.iter().all(|(c, t)| p.column(c) == Some(*t))
        {
            let has: Vec<String> = p
                .columns
                .iter()
                .map(|(c, t)| format!("{c}: {}", t.as_str()))
                .collect();
            return Err(StoreError::refused(format!(
                "{name} is the platform's own component ({}) — name yours otherwise",
                has.join(", ")
            )));
        }
        if columns.len() > MAX_COLUMNS_PER_COMPONENT {
            return Err(StoreError::refused(format!(
                "{name} has {} columns; a component may have at most {MAX_COLUMNS_PER_COMPONENT} — split it into two components",
                columns.len()
            )));
        }
        for (j, (column, _)) in columns.iter().enumerate() {
            if !is_word(column) {
                return Err(StoreError::refused(format!(
                    "{name}.{column} is not a column name — use a-z, 0-9 and _, starting with a letter, up to 40 characters"
                )));
            }
            if STORE_COLUMNS.contains(&column.as_str()) {
                return Err(StoreError::refused(format!(
                    "{name}.{column} is kept by the store on every row — name the column otherwise"
                )));
            }
            if columns[..j].iter().any(|(c, _)| c == column) {
                return Err(StoreError::refused(format!(
                    "{name}.{column} is declared twice — declare each column once"
                )));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Shape, fit};
    use crate::ColumnType::{Bool, Number, Text, Time};

    fn shapes(names: &[&str]) -> Vec<Shape> {
        names.iter().map(|n| Shape::parse(n).unwrap()).collect()
    }

    #[test]
    fn columns_fit_the_narrowest_shape_made_holding_them_all() {
        let made = shapes(&["t4r0n4b0d0", "t2r0n2b0d0", "t2r0n2b1d0", "t8r0n8b8d8"]);
        let groups = fit(&made, &[Text, Number, Number]);
        assert_eq!(groups, vec![(made[1], vec![0, 1, 2])]);
    }

    #[test]
    fn columns_no_shape_made_holds_are_split_greedily() {
        let made = shapes(&["t2r0n2b0d0", "t0r0n0b0d4"]);
        let types = [Text, Number, Text, Text, Time, Bool];
        let groups = fit(&made, &types);
        assert_eq!(
            groups,
            vec![
                (made[0], vec![0, 1, 2]),
                (Shape::parse("t1r0n0b0d0").unwrap(), vec![3]),
                (Shape::parse("t0r0n0b1d0").unwrap(), vec![5]),
                (Shape::parse("t0r0n0b0d1").unwrap(), vec![4]),
            ]
        );
    }
}
