//! `commands` for a person reaching 200 apps of 10 commands each (target:
//! under 10 ms) — a listing past `WHOLE_LISTING_BYTES`, so it names the 200
//! apps rather than their 2000 commands (issue 24). Prints the figures: the first call after a deploy (the
//! registry re-reads one app), and the steady state (the cache keyed by the
//! deploy counter), with the ratio of the median to the target; then what a
//! door adds — the whole answer serialized to JSON text, and the call,
//! serialization and drop together, as an MCP reply costs. Each figure is
//! taken by the wall clock and by this thread's CPU time: on a machine shared
//! with other work the CPU time is the figure that does not move with the
//! load. The allocations a call makes are counted too: the answer is a tree of
//! small JSON values, and making and freeing them is most of its cost.
//!
//! As in the `shed` binary, the runtime is multi-threaded and memory comes
//! from mimalloc: the figures are the server's. The store reads on the
//! calling thread, so this thread's CPU time is the whole call's.
//!
//! Run: `cargo bench -p shed-host --bench commands`

// A bench stops where the unexpected happens, saying why: unwrap and
// expect are how it says so (the workspace's lints deny them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::alloc::{GlobalAlloc, Layout};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use shed_host::answer::CommandList;
use shed_host::{Access, Answer, Host, HostConfig, Role};

const SPACES: usize = 10;
const APPS_PER_SPACE: usize = 20;
const COMMANDS: usize = 10;
const RUNS: usize = 300;
const REDEPLOYS: usize = 20;
const TARGET: Duration = Duration::from_millis(10);

/// mimalloc, as the `shed` binary uses, counting the allocations made.
struct Counting;

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

// SAFETY: every call is passed on unchanged to mimalloc, which upholds the
// `GlobalAlloc` contract; the counter has no bearing on the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc` requires.
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated by mimalloc with this layout.
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's layout, as `GlobalAlloc::alloc_zeroed` requires.
        unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `ptr` was allocated by mimalloc with `layout`.
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn tools() -> String {
    let entries: Vec<String> = (0..COMMANDS)
        .map(|i| {
            format!(
                r#""verb_{i}": {{ "description": "Do thing {i} with a run, then tell who did it", "input": {{ "who": "text", "miles": "number", "at": "time" }},
                   "query": ".jog!&.jog.who={{{{who}}}}&.jog.miles>={{{{miles}}}}&.created.at>={{{{at}}}}", "view": "board.html" }}"#
            )
        })
        .collect();
    format!("{{ {} }}", entries.join(",\n"))
}

fn app_files() -> BTreeMap<String, Vec<u8>> {
    [
        (
            "vocab.json",
            r#"{ "tools": false, "jog": { "who": "text", "miles": "number", "at": "time" } }"#
                .to_string(),
        ),
        ("tools.json", tools()),
        ("board.html", "<!doctype html><ol></ol>".to_string()),
    ]
    .into_iter()
    .map(|(p, t)| (p.to_string(), t.into_bytes()))
    .collect()
}

/// The CPU time this thread has used so far.
fn thread_cpu_time() -> Duration {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `now` is a valid timespec for the call to write into.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

/// Figures of `RUNS` runs of one piece of work.
struct Timed {
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
    /// Allocations over all runs, by any thread.
    allocations: u64,
}

impl Timed {
    /// `wall median …, p95 …; thread CPU median …; N allocations a call`
    fn line(self) -> String {
        let (p50, p95, _) = quantiles(self.wall);
        let (cpu50, cpu95, _) = quantiles(self.cpu);
        format!(
            "wall median {p50:.2?}, p95 {p95:.2?}; thread CPU median {cpu50:.2?}, p95 {cpu95:.2?}; {} allocations a call",
            self.allocations / RUNS as u64
        )
    }
}

/// Runs `work` `RUNS` times, each result dropped inside the measure.
async fn timed<T, F: std::future::Future<Output = T>>(mut work: impl FnMut() -> F) -> Timed {
    let (mut wall, mut cpu) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    let before = ALLOCATIONS.load(Ordering::Relaxed);
    for _ in 0..RUNS {
        let (w, c) = (Instant::now(), thread_cpu_time());
        drop(std::hint::black_box(work().await));
        cpu.push(thread_cpu_time().saturating_sub(c));
        wall.push(w.elapsed());
    }
    let allocations = ALLOCATIONS.load(Ordering::Relaxed) - before;
    Timed {
        wall,
        cpu,
        allocations,
    }
}

fn quantiles(mut times: Vec<Duration>) -> (Duration, Duration, Duration) {
    times.sort();
    let at = |q: f64| {
        times
            .get(((times.len() as f64 - 1.0) * q) as usize)
            .copied()
            .unwrap_or_default()
    };
    (at(0.5), at(0.95), at(1.0))
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("a runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let host = Host::open(HostConfig {
            data_dir: dir.path().to_path_buf(),
            public_url: "http://localhost:7700".into(),
            database: None,
        })
        .await
        .expect("the host opens");
        host.add_person("jeff", Some("Jeff")).await.expect("jeff");
        let jeff = host.caller_for_handle("jeff").await.expect("jeff signs in");
        let started = Instant::now();
        for s in 0..SPACES {
            let space = format!("space{s}");
            host.add_person(&format!("owner{s}"), None)
                .await
                .expect("an owner");
            host.add_space(&space, &format!("owner{s}"))
                .await
                .expect("a space");
            host.add_member(&space, "jeff", Role::Editor)
                .await
                .expect("jeff joins");
            for a in 0..APPS_PER_SPACE {
                host.deploy_folder(
                    &jeff,
                    &format!("{space}/app{a}"),
                    app_files(),
                    Some(format!("App {a}")),
                    Some(Access::Private),
                )
                .await
                .expect("a deploy");
            }
        }
        println!(
            "set up {} apps × {COMMANDS} commands in {:.1?}",
            SPACES * APPS_PER_SPACE,
            started.elapsed()
        );

        let t = Instant::now();
        let first = host.commands(&jeff, None).await.expect("commands");
        let cold = t.elapsed();
        let listed = first.data_json()["apps"].as_array().map_or(0, Vec::len);
        assert_eq!(listed, SPACES * APPS_PER_SPACE);

        // After one more deploy: the registry re-reads that one app only.
        let mut after_deploy = Vec::with_capacity(REDEPLOYS);
        for _ in 0..REDEPLOYS {
            host.deploy_folder(&jeff, "space0/app0", app_files(), None, None)
                .await
                .expect("a deploy");
            let t = Instant::now();
            host.commands(&jeff, None).await.expect("commands");
            after_deploy.push(t.elapsed());
        }
        let (after_deploy, _, after_deploy_max) = quantiles(after_deploy);

        let all = timed(|| host.commands(&jeff, None)).await;
        let (p50, _, max) = quantiles(all.wall.clone());
        let cpu50 = quantiles(all.cpu.clone()).0;
        let one = timed(|| host.commands(&jeff, Some("space3/app7"))).await;
        let copy = timed(|| async { first.data_json() }).await;
        let json = wire(first.clone()).expect("the answer serializes");
        let serialized = timed(|| async { wire(first.clone()) }).await;
        let through = timed(|| async {
            let answer = host.commands(&jeff, None).await.expect("commands");
            wire(answer)
        })
        .await;
        let (door50, _, _) = quantiles(through.wall.clone());
        let door_cpu50 = quantiles(through.cpu.clone()).0;
        println!("commands listing {listed} apps, answer as JSON (its text and data) {} bytes", json.len());
        println!("  first call (registry built from the database): {cold:.2?}");
        println!("  first call after one deploy (one app re-read), over {REDEPLOYS} deploys: wall median {after_deploy:.2?}, max {after_deploy_max:.2?}");
        println!("  steady state over {RUNS} calls (max {max:.2?}): {}", all.line());
        println!("  one app (app: space3/app7), the fixed cost of a call: {}", one.line());
        println!("  copying the 200 apps' JSON alone: {}", copy.line());
        println!("  the answer serialized to JSON text: {}", serialized.line());
        println!("  call, serialization and drop (what a door pays): {}", through.line());
        println!(
            "  median / target ({TARGET:?}): call wall {:.3}, thread CPU {:.3}; with serialization wall {:.3}, thread CPU {:.3}",
            p50.as_secs_f64() / TARGET.as_secs_f64(),
            cpu50.as_secs_f64() / TARGET.as_secs_f64(),
            door50.as_secs_f64() / TARGET.as_secs_f64(),
            door_cpu50.as_secs_f64() / TARGET.as_secs_f64()
        );
    });
}

/// An answer as a door sends it: the text a model reads and its data as
/// JSON, serialized.
fn wire(answer: Answer<CommandList>) -> serde_json::Result<Vec<u8>> {
    let said = answer.widen().said();
    serde_json::to_vec(&serde_json::json!({
        "text": said.text,
        "data": said.json,
    }))
}
