//! `commands` for a person reaching 200 apps of 10 commands each (target:
//! under 10 ms). Prints the figures: the first call after a deploy (the
//! registry re-reads one app), and the steady state (the cache keyed by the
//! deploy counter), with the ratio of the median to the target. Each figure
//! is taken by the wall clock and by this thread's CPU time (the runtime is
//! single-threaded, so the call runs on this thread but for the store's two
//! reads on a blocking thread): on a machine shared with other work the CPU
//! time is the figure that does not move with the load.
//!
//! Run: `cargo bench -p shed-host --bench commands`

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use shed_host::{Access, Host, HostConfig, Role};

const SPACES: usize = 10;
const APPS_PER_SPACE: usize = 20;
const COMMANDS: usize = 10;
const RUNS: usize = 300;
const TARGET: Duration = Duration::from_millis(10);

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

/// Runs `work` `RUNS` times: (wall, thread CPU) per run.
async fn timed<T, F: std::future::Future<Output = T>>(
    mut work: impl FnMut() -> F,
) -> (Vec<Duration>, Vec<Duration>) {
    let (mut wall, mut cpu) = (Vec::with_capacity(RUNS), Vec::with_capacity(RUNS));
    for _ in 0..RUNS {
        let (w, c) = (Instant::now(), thread_cpu_time());
        std::hint::black_box(work().await);
        cpu.push(thread_cpu_time().saturating_sub(c));
        wall.push(w.elapsed());
    }
    (wall, cpu)
}

fn median(mut times: Vec<Duration>) -> (Duration, Duration, Duration) {
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
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let host = Host::open(HostConfig {
            data_dir: dir.path().to_path_buf(),
            public_url: "http://localhost:7700".into(),
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
        let listed = first.data["commands"].as_array().map_or(0, Vec::len);
        assert_eq!(listed, SPACES * APPS_PER_SPACE * COMMANDS);

        // After one more deploy: the registry re-reads that one app only.
        host.deploy_folder(&jeff, "space0/app0", app_files(), None, None)
            .await
            .expect("a deploy");
        let t = Instant::now();
        host.commands(&jeff, None).await.expect("commands");
        let after_deploy = t.elapsed();

        let (wall, cpu) = timed(|| host.commands(&jeff, None)).await;
        let (one_wall, one_cpu) = timed(|| host.commands(&jeff, Some("space3/app7"))).await;
        let data = first.data.clone();
        let (clone_wall, clone_cpu) = timed(|| async { data.clone() }).await;
        let (p50, p95, max) = median(wall);
        let (cpu50, cpu95, _) = median(cpu);
        println!("commands listing {listed} commands, text {} bytes", first.text.len());
        println!("  first call (registry built from the database): {cold:.2?}");
        println!("  first call after one deploy (one app re-read):  {after_deploy:.2?}");
        println!("  steady state over {RUNS} calls: wall median {p50:.2?}, p95 {p95:.2?}, max {max:.2?}; thread CPU median {cpu50:.2?}, p95 {cpu95:.2?}");
        println!(
            "  one app (app: space3/app7), the fixed cost of a call: wall median {:.2?}, thread CPU median {:.2?}",
            median(one_wall).0,
            median(one_cpu).0
        );
        println!(
            "  building and dropping the 2000 rows' JSON alone (the floor): wall median {:.2?}, thread CPU median {:.2?}",
            median(clone_wall).0,
            median(clone_cpu).0
        );
        println!(
            "  median / target ({TARGET:?}): wall {:.3}, thread CPU {:.3}",
            p50.as_secs_f64() / TARGET.as_secs_f64(),
            cpu50.as_secs_f64() / TARGET.as_secs_f64()
        );
    });
}
