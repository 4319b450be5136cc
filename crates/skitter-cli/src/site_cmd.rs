//! The commands that serve the fault-injecting local test site: `skitter bench`
//! (`bench_cmd`) and `skitter testsite` (`testsite_cmd`). They are compiled only
//! with the `testsite` feature, so a default build, the release binary included,
//! carries no test site. Without the feature [`SiteCommand`] has no variants, so
//! `main` names and runs it the same way in both builds.

#[cfg(feature = "testsite")]
pub use with_site::SiteCommand;
#[cfg(not(feature = "testsite"))]
pub use without_site::SiteCommand;

#[cfg(feature = "testsite")]
mod with_site {
    use clap::Subcommand;
    use tokio_util::sync::CancellationToken;

    use crate::{bench_cmd, testsite_cmd};

    /// `bench` and `testsite`.
    #[derive(Subcommand, Debug)]
    pub enum SiteCommand {
        /// Start the local test site, crawl it, and print pages/s, CPU time and peak memory.
        Bench(Box<bench_cmd::BenchArgs>),
        /// Serve the local test site (a generated site of interlinked pages) on loopback.
        Testsite(Box<testsite_cmd::TestsiteArgs>),
    }

    impl SiteCommand {
        /// Runs the command; the exit status as `main` returns it.
        pub async fn run(self, cancel: CancellationToken) -> anyhow::Result<u8> {
            match self {
                SiteCommand::Bench(args) => bench_cmd::run(*args, cancel).await,
                SiteCommand::Testsite(args) => testsite_cmd::run(*args, cancel).await,
            }
        }
    }
}

#[cfg(not(feature = "testsite"))]
mod without_site {
    use clap::Subcommand;
    use tokio_util::sync::CancellationToken;

    /// No command: this build has no test site (build with `--features testsite`).
    #[derive(Subcommand, Debug)]
    pub enum SiteCommand {}

    impl SiteCommand {
        /// Never called: there is no value to call it on.
        pub async fn run(self, _cancel: CancellationToken) -> anyhow::Result<u8> {
            match self {}
        }
    }
}
