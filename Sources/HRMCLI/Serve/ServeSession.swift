import Monitor
package import Outputs
import SessionLibrary

/// The watch side of `hrm serve`, for the `hrm-serve` executable: the strap(s) found and watched
/// exactly as `hrm watch` does (same options, same output on stdout), every event into `feed`.
public enum ServeSession {
    /// Runs until Ctrl-C, SIGTERM or a limit; `whenStopped` runs first (close the clients), then
    /// the strap is let go as watch does. Returns watch's exit status.
    package static func run(
        _ arguments: WatchArguments, record: String?, feed: LiveFeed, metrics: SessionMetrics,
        whenStopped: @escaping @Sendable () async -> Void
    ) async -> Int32 {
        StandardOutput.prepare()
        var options = arguments.options(command: "serve", recording: record.map { .file($0) })
        options.outputs.append(LiveFeedOutput(feed: feed))
        options.outputs.append(MetricsOutput(metrics: metrics))
        return await WatchSession.run(options, whenStopped: whenStopped)
    }

    /// A line for people on stderr (`hrm serve: ...`), escaped like every diagnostic.
    public static func log(_ text: String) {
        StandardOutput.diagnostic("hrm serve: \(text)")
    }
}
