//! Command-line forms that users type: list options whose values may be negative.

use std::process::Command;

fn eval(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_posegpu"))
        .arg("eval")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn negative_lists_take_the_form_the_help_suggests() {
    // `--aim-yaws -90,90` (a space, as "default -90,0,90" suggests) reads like `--aim-yaws=...`.
    let base = ["humanoid", "--animation", "idle", "--aim", "30,-10"];
    let spaced = eval(
        &[
            &base[..],
            &[
                "--aim-yaws",
                "-90,0,90",
                "--aim-pitches",
                "-45,0,45",
                "--times",
                "-0.5,0.2",
            ],
        ]
        .concat(),
    );
    let equals = eval(
        &[
            &base[..],
            &[
                "--aim-yaws=-90,0,90",
                "--aim-pitches=-45,0,45",
                "--times=-0.5,0.2",
            ],
        ]
        .concat(),
    );
    for out in [&spaced, &equals] {
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert_eq!(spaced.stdout, equals.stdout);
    // A value that is not a number is still an error naming it.
    let bad = eval(&[&base[..], &["--aim-yaws", "-90,left", "--times", "0"]].concat());
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("left"));
}
