//! The `frun` binary: everything lives in the library; this only passes the arguments and exits
//! with the status it gets back.

fn main() {
    let code = frun::main_with_args(std::env::args_os());
    std::process::exit(code);
}
