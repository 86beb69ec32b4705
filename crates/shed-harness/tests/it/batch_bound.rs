//! A batch's result within the model bound, whatever its results are:
//! sixteen unknown commands, sixteen refusals, and a mix of every result
//! form, at 1, 2 and 4 KiB (`--tool-output-bound`).

use serde_json::{Value, json};

use crate::common::{Host, TYPED_TASK, row};

const BOUNDS: [usize; 3] = [1024, 2048, 4096];

/// Whether a result reads as a refusal.
type IsRefused = fn(&Value) -> bool;

/// A long command name, as a model may send or a host may list.
fn long_name(tag: &str, i: usize) -> String {
    format!("a/{tag}{i}.{}", "x".repeat(180))
}

/// Runs `input` through `tool` at `bound` and checks what every batch result
/// must hold: it fits the bound, each hint is said once and by no result,
/// and every call is either shown or counted as left out.
fn within_bound(host: &Host, tool: &str, input: &Value, bound: usize, calls: usize) -> Value {
    let out = host.tool(
        tool,
        input.clone(),
        &[
            "--tool-output-bound",
            &bound.to_string(),
            "--observation-ceiling",
            "space:mine",
            TYPED_TASK[0],
            TYPED_TASK[1],
        ],
    );
    let text = out.to_string();
    assert!(text.len() <= bound, "{} > {bound}: {text}", text.len());
    assert_eq!(out["status"], "batch", "{text}");
    let results = out["results"].as_array().unwrap();
    assert!(results.iter().all(|r| r.get("hint").is_none()), "{text}");
    for hint in out["hints"].as_array().into_iter().flatten() {
        assert_eq!(text.matches(hint.as_str().unwrap()).count(), 1, "{text}");
    }
    let omitted = out["omitted"]["count"].as_u64().unwrap_or(0) as usize;
    assert_eq!(results.len() + omitted, calls, "{text}");
    if omitted > 0 {
        assert_eq!(out["truncated"], true, "{text}");
        let by_status: u64 = out["omitted"]["byStatus"]
            .as_object()
            .unwrap()
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(by_status as usize, omitted, "{text}");
    }
    out
}

// "the whole result fits the bound or says what it left out" — sixteen
// unknown commands with long names, each with its suggestions.
#[test]
fn sixteen_unknown_commands_fit_the_bound() {
    let listed: Vec<Value> = (0..4).map(|i| row(&long_name("l", i), "read")).collect();
    let host = Host::new(json!(listed));
    let calls: Vec<Value> = (0..16)
        .map(|i| json!({"command": long_name("l", i + 10)}))
        .collect();
    for bound in BOUNDS {
        let out = within_bound(&host, "run_command", &json!({ "calls": calls }), bound, 16);
        let results = out["results"].as_array().unwrap();
        assert!(!results.is_empty(), "{out}");
        assert!(results.iter().all(|r| r["status"] == "unknown_command"));
        assert_eq!(out["hints"].as_array().unwrap().len(), 1, "{out}");
    }
    assert!(host.runs().is_empty());
}

// Sixteen refusals: run_read_command's own (`not_granted`, a write) and the
// broker's (`executed`, `code: not_granted`), each with the host's sentence.
#[test]
fn sixteen_refusals_fit_the_bound() {
    let mut rows = Vec::new();
    for i in 0..8 {
        rows.push(row(&long_name("w", i), "write"));
        let name = long_name("f", i);
        rows.push(row(&name, "read"));
    }
    let host = Host::new(json!(rows));
    for i in 0..8 {
        host.set_outcome(
            &long_name("f", i),
            json!({"ok": false, "code": "forbidden", "id": "i".repeat(64),
                   "message": "m".repeat(3000), "body": null}),
        );
    }
    let read_only: Vec<Value> = (0..16)
        .map(|i| json!({"command": long_name("w", i % 8)}))
        .collect();
    let forbidden: Vec<Value> = (0..16)
        .map(|i| json!({"command": long_name("f", i % 8)}))
        .collect();
    // Each tool, its calls, and what its refusal reads as.
    let cases: [(&str, Vec<Value>, IsRefused); 2] = [
        ("run_read_command", read_only, |r| {
            r["status"] == "not_granted"
        }),
        ("run_command", forbidden, |r| {
            r["outcome"]["code"] == "not_granted"
        }),
    ];
    for bound in BOUNDS {
        for (tool, calls, refused) in &cases {
            let out = within_bound(&host, tool, &json!({ "calls": calls }), bound, 16);
            let results = out["results"].as_array().unwrap();
            assert!(results.iter().all(refused), "{out}");
        }
    }
}

// Every result form in one batch: admitted, withheld, refused by the broker,
// bad-args with its signature, lost, unknown, refused as not read-only, and a
// malformed call whose refusal quotes a long key.
#[test]
fn a_mix_of_every_result_form_fits_the_bound() {
    let mut bad = row(&long_name("bad", 0), "read");
    let props: serde_json::Map<String, Value> = (0..30)
        .map(|i| (format!("argument_{i}"), json!({"type": "string"})))
        .collect();
    bad["inputSchema"] = json!({"type": "object", "properties": props});
    let host = Host::new(json!([
        row(&long_name("mine", 0), "read"),
        row(&long_name("theirs", 0), "read"),
        row(&long_name("f", 0), "read"),
        bad,
        row(&long_name("lost", 0), "read"),
        row(&long_name("w", 0), "write"),
    ]));
    host.set_outcome(
        &long_name("mine", 0),
        json!({"ok": true, "code": "ok", "body": {"rows": "r".repeat(600)},
               "ifc": {"readers": ["space:mine"], "integrity": "trusted"}}),
    );
    host.set_outcome(
        &long_name("theirs", 0),
        json!({"ok": true, "code": "ok", "body": {"rows": "t".repeat(600)},
               "ifc": {"readers": ["space:theirs"], "integrity": "trusted"}}),
    );
    host.set_outcome(
        &long_name("f", 0),
        json!({"ok": false, "code": "refused", "message": "m".repeat(3000)}),
    );
    host.set_outcome(
        &long_name("bad", 0),
        json!({"ok": false, "code": "bad-args", "completed": vec!["c"; 40]}),
    );
    host.set_outcome(&long_name("lost", 0), json!({"$exit": 3}));
    let mut malformed = json!({"command": "a"});
    malformed["k".repeat(2000)] = json!(1);
    let kinds = [
        json!({"command": long_name("mine", 0)}),
        json!({"command": long_name("theirs", 0)}),
        json!({"command": long_name("f", 0)}),
        json!({"command": long_name("bad", 0)}),
        json!({"command": long_name("lost", 0)}),
        json!({"command": long_name("nobody", 0)}),
        json!({"command": long_name("w", 0)}),
        malformed,
    ];
    let calls: Vec<Value> = (0..16).map(|i| kinds[i % kinds.len()].clone()).collect();
    for bound in BOUNDS {
        let out = within_bound(
            &host,
            "run_read_command",
            &json!({ "calls": calls }),
            bound,
            16,
        );
        // A bound too small for all sixteen says so and counts the rest.
        if bound == 1024 {
            assert!(out["omitted"]["count"].as_u64().unwrap() > 0, "{out}");
        }
    }
    // At the default bound nothing is left out and every hint is said once.
    let out = within_bound(
        &host,
        "run_read_command",
        &json!({ "calls": calls }),
        32 * 1024,
        16,
    );
    assert!(out.get("omitted").is_none(), "{out}");
    assert_eq!(out["hints"].as_array().unwrap().len(), 4, "{out}");
    // The malformed call's refusal quotes its 2,000-character key, cut.
    let malformed = &out["results"][7];
    assert_eq!(malformed["reason"], "invalid_input", "{out}");
    let message = malformed["message"].as_str().unwrap();
    assert_eq!(message.chars().count(), 400, "{message}");
}
