{
  description = "frun: run a command over every record of its input, in parallel";

  inputs = {
    nixpkgs.url = "github:NixOS/nixpkgs/nixpkgs-unstable";
    crane.url = "github:ipetkov/crane";
    rust-overlay = {
      url = "github:oxalica/rust-overlay";
      inputs.nixpkgs.follows = "nixpkgs";
    };
    advisory-db = {
      url = "github:rustsec/advisory-db";
      flake = false;
    };
  };

  outputs =
    {
      self,
      nixpkgs,
      crane,
      rust-overlay,
      advisory-db,
    }:
    let
      systems = [
        "x86_64-linux"
        "aarch64-linux"
      ];
      forAllSystems = f: nixpkgs.lib.genAttrs systems f;

      version = (builtins.fromTOML (builtins.readFile ./Cargo.toml)).package.version;
      # `frun --version` shows 12 hex digits of the commit; a tree with uncommitted changes shows "dirty".
      revision = self.rev or "dirty";
      commit = builtins.substring 0 12 revision;
      # The repository, as Cargo.toml's `repository` names it (the one place it is written).
      sourceUrl = (builtins.fromTOML (builtins.readFile ./Cargo.toml)).package.repository;

      perSystem =
        system:
        let
          pkgs = import nixpkgs {
            inherit system;
            overlays = [ rust-overlay.overlays.default ];
          };
          inherit (pkgs) lib;

          muslTarget = "${pkgs.stdenv.hostPlatform.parsed.cpu.name}-unknown-linux-musl";
          # Same channel and components as rust-toolchain.toml, plus the static target.
          toolchain = pkgs.rust-bin.stable.latest.default.override {
            extensions = [
              "clippy"
              "rustfmt"
            ];
            targets = [ muslTarget ];
          };
          craneLib = (crane.mkLib pkgs).overrideToolchain (_: toolchain);

          cargoFiles = lib.fileset.unions [
            (craneLib.fileset.commonCargoSources ./.)
            (lib.fileset.maybeMissing ./engine/proptest-regressions)
            (lib.fileset.fileFilter (f: f.hasExt "proptest-regressions") ./tests)
          ];
          src = lib.fileset.toSource {
            root = ./.;
            fileset = cargoFiles;
          };

          commonArgs = {
            inherit src version;
            pname = "frun";
            strictDeps = true;
            cargoExtraArgs = "--locked";
            FRUN_GIT_COMMIT = commit;
          };

          # The glibc builds (tests, clippy) link the feature hwloc (not a default feature) against
          # nixpkgs' libhwloc, found by hwlocality-sys with pkg-config.
          hostArgs = commonArgs // {
            cargoExtraArgs = "--locked --features hwloc";
            nativeBuildInputs = [ pkgs.pkg-config ];
            buildInputs = [ pkgs.hwloc ];
          };

          # Host (glibc) dependencies for tests and clippy; crane builds with the release profile.
          cargoArtifacts = craneLib.buildDepsOnly hostArgs;

          # The static binary links a static musl libhwloc. The build platform is glibc, so for
          # pkg-config (the pkg-config crate) this is cross-compiling: PKG_CONFIG_ALLOW_CROSS.
          muslArgs = commonArgs // {
            cargoExtraArgs = "--locked --features hwloc";
            CARGO_BUILD_TARGET = muslTarget;
            CARGO_BUILD_RUSTFLAGS = "-C target-feature=+crt-static";
            PKG_CONFIG_ALLOW_CROSS = "1";
            nativeBuildInputs = [ pkgs.pkg-config ];
            buildInputs = [ pkgs.pkgsStatic.hwloc ];
          };

          frun = craneLib.buildPackage (
            muslArgs
            // {
              cargoArtifacts = craneLib.buildDepsOnly muslArgs;
              nativeBuildInputs = muslArgs.nativeBuildInputs ++ [ pkgs.cargo-auditable ];
              # Embeds the dependency list in the binary (`cargo audit bin`, `rust-audit-info`).
              cargoBuildCommand = "cargo auditable build --release";
              doCheck = false;
              meta = {
                description = "Fast parallel xargs replacement";
                mainProgram = "frun";
              };
            }
          );

          # The bash loadable builtin: `packaging/build.sh --only-blobs` builds the library with
          # `--no-default-features --features bash` (no hwloc: it reads /sys) as a cdylib per glibc
          # floor (dist/*.so, linked by cargo-zigbuild with zig from nixpkgs) and assembles
          # dist/frun.bash around them.
          frun-bash = craneLib.mkCargoDerivation (
            commonArgs
            // {
              pname = "frun-bash";
              src = lib.fileset.toSource {
                root = ./.;
                fileset = lib.fileset.unions [
                  cargoFiles
                  (lib.fileset.maybeMissing ./packaging)
                ];
              };
              cargoArtifacts = null;
              doInstallCargoArtifacts = false;
              nativeBuildInputs = [
                pkgs.cargo-zigbuild
                pkgs.zig
                pkgs.python3
                pkgs.getconf
              ];
              buildPhaseCargoCommand = ''
                export ZIG_GLOBAL_CACHE_DIR="$TMPDIR/zig-cache" ZIG_LOCAL_CACHE_DIR="$TMPDIR/zig-local"
                export FRUN_TOOLS_DIR="$TMPDIR/frun-tools" # HOME is not writable in the sandbox
                bash packaging/build.sh --only-blobs
              '';
              installPhaseCommand = ''
                mkdir -p "$out/lib/frun" "$out/bin"
                cp dist/*.so "$out/lib/frun/"
                install -m 0755 dist/frun.bash "$out/bin/frun.bash"
              '';
            }
          );

          # The Python module (`import frun`): the crate in python/ (a member of the workspace, on
          # the frun library; one Cargo.lock at the root) built by maturin into an abi3 wheel and
          # installed as a Python package.
          rustPlatform = pkgs.makeRustPlatform {
            cargo = toolchain;
            rustc = toolchain;
          };
          frun-python = pkgs.python3Packages.buildPythonPackage {
            pname = "frun";
            inherit version;
            pyproject = true;
            src = lib.fileset.toSource {
              root = ./.;
              fileset = lib.fileset.unions [
                cargoFiles
                ./python/pyproject.toml
                ./python/README.md
              ];
            };
            buildAndTestSubdir = "python";
            cargoDeps = rustPlatform.importCargoLock { lockFile = ./Cargo.lock; };
            nativeBuildInputs = [
              rustPlatform.cargoSetupHook
              rustPlatform.maturinBuildHook
            ];
            pythonImportsCheck = [ "frun" ];
          };

          # frun with a static BusyBox userland (/bin/sh, echo, grep, …) so a pipeline's first
          # command works, `parallel` and `xargs` first on PATH as frun's personalities, and an
          # empty /tmp (the Containerfile image holds the same).
          oci-image = pkgs.dockerTools.buildLayeredImage {
            name = "frun";
            tag = version;
            contents = [
              pkgs.pkgsStatic.busybox
              frun
            ];
            extraCommands = ''
              mkdir -m 1777 tmp
              mkdir -p usr/local/bin
              ln -s ${lib.getExe frun} usr/local/bin/parallel
              ln -s ${lib.getExe frun} usr/local/bin/xargs
              ln -s ${lib.getExe frun} usr/local/bin/sem
            '';
            config = {
              Entrypoint = [ (lib.getExe frun) ];
              Env = [ "PATH=/usr/local/bin:/bin" ];
              Labels = {
                "org.opencontainers.image.title" = "frun";
                "org.opencontainers.image.source" = sourceUrl;
                "org.opencontainers.image.revision" = revision;
                "org.opencontainers.image.version" = version;
              };
            };
          };
        in
        {
          inherit
            pkgs
            craneLib
            frun
            frun-bash
            frun-python
            oci-image
            ;
          checks = {
            inherit frun;
            frun-test = craneLib.cargoTest (
              hostArgs
              // {
                inherit cargoArtifacts;
                # Tools the integration tests start.
                nativeBuildInputs = hostArgs.nativeBuildInputs ++ [
                  pkgs.procps
                  pkgs.getconf
                ];
              }
            );
            frun-clippy = craneLib.cargoClippy (
              hostArgs
              // {
                inherit cargoArtifacts;
                cargoClippyExtraArgs = "--all-targets -- -D warnings";
              }
            );
            frun-fmt = craneLib.cargoFmt { inherit src; };
            frun-audit = craneLib.cargoAudit { inherit src advisory-db; };
          };
        };

      each = forAllSystems perSystem;
    in
    {
      packages = forAllSystems (system: {
        inherit (each.${system}) frun frun-bash frun-python oci-image;
        default = each.${system}.frun;
      });

      apps = forAllSystems (system: {
        default = {
          type = "app";
          program = nixpkgs.lib.getExe each.${system}.frun;
        };
      });

      checks = forAllSystems (system: each.${system}.checks);

      devShells = forAllSystems (
        system:
        let
          inherit (each.${system}) pkgs craneLib;
        in
        {
          default = craneLib.devShell {
            checks = each.${system}.checks;
            packages = [
              pkgs.cargo-auditable
              pkgs.cargo-audit
              pkgs.cargo-cyclonedx
              pkgs.cargo-zigbuild
              pkgs.zig
              pkgs.deadnix
              pkgs.actionlint
              pkgs.zizmor
            ];
          };
        }
      );

      formatter = forAllSystems (system: each.${system}.pkgs.nixfmt);
    };
}
