package import Monitor
import Threads

/// `--osc HOST[:PORT]`: the heart rate as OSC messages, for VRChat's avatars and other live apps
/// (TouchDesigner, Resolume, Max). Opening resolves the host on a thread of its own (a name that
/// does not resolve is a usage error, 64, before the strap is touched); the sink takes each event
/// at once and sends from a task of its own.
package struct OSCOutput: OutputProvider {
    /// Where and what to send.
    package let settings: OSCSettings

    /// The output `settings` describe.
    package init(settings: OSCSettings) {
        self.settings = settings
    }

    package func open(_ context: OutputContext) async throws(OutputFailure) -> SessionOutput {
        let destination = settings.destination
        let resolver = WorkerThread(named: "hrm-osc-resolve")
        defer { resolver.stop() }
        let sender: UDPSender
        do {
            sender = try await resolver.run { () throws(UDPSender.Failure) in
                try UDPSender(host: destination.host, port: destination.port)
            }
        } catch {
            throw OutputFailure(code: .oscSendFailed, message: "--osc \(destination): \(error)", status: 64)
        }
        let sink = OSCSink(
            settings: settings, sender: sender, clock: ContinuousClock(),
            maximumHeartRate: context.options.maximumHeartRate, command: context.command,
            console: context.options.console, report: context.report)
        return SessionOutput(delivery: .immediate(sink))
    }
}
