public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// `hrm watch`: live heart rate from one strap or several, reconnecting by itself after a drop.
public struct WatchCommand: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Connect to a heart-rate monitor and print live measurements.",
        discussion: """
            DEVICE is an address (AA:BB:CC:DD:EE:FF) or a case-insensitive part of the name. \
            Without it hrm uses the last device it watched, else the monitor with the strongest \
            signal a short scan finds. Several DEVICEs (or --all, every monitor the scan finds) \
            are watched at once, each with its own connection and reconnects, into one output \
            that names the strap on every line (a live table on a terminal); ADAPTER/DEVICE \
            (hci1/AA:BB:CC:DD:EE:FF) reaches a strap through another adapter.

            On a terminal hrm shows a live line; into a pipe one line per event; --json prints \
            JSON lines (see the README) and --csv a header and one row per measurement. Where \
            the terminal rewraps its lines when its window narrows (tmux, screen, VTE terminals \
            such as GNOME Terminal, kitty, Konsole, Windows Terminal, foot, Alacritty, iTerm2, \
            WezTerm, ...: told from the environment they set), the live line's rewrapped rows \
            are taken off too; HRM_REFLOW=yes or no overrides the guess. After a \
            drop hrm reconnects by itself (0.5 s to 5 s between attempts); with --no-reconnect \
            it says so, gives the summary and the final status, and exits 1. \
            Ctrl-C stops notifications, disconnects and exits 0.

            Every --hrv-every seconds (default 5; 0 for none) an hrv event gives RMSSD, SDNN, \
            pNN50, mean HR and DFA alpha1 over the last --hrv-window seconds of beats (default \
            60), after correcting missed, extra and ectopic beats (--no-correction to use RR \
            intervals as they come). --max-hr (with --rest-hr for heart-rate reserve) or --zones \
            puts a zone on every measurement; --alert-above/--alert-below send one alert when the \
            heart rate stays past the bound for 3 s, again after it came back by 3 bpm, and \
            --on-alert runs a shell command for each. A summary (time connected, min/avg/max, \
            time in zones, the session's HRV) comes before the final status.

            --mqtt URL also publishes everything to an MQTT broker (topics in the README: \
            hrm/ID/DEVICE/measurement, .../bpm, .../state, ...; Home Assistant discovery unless \
            --no-ha-discovery); while the broker is away the messages wait, in order, and go when \
            it is back. hrm team URL shows every host's straps.

            Exit status: 0 on a clean stop, 1 when the device was not found (or the link dropped \
            with --no-reconnect), 69 when Bluetooth or the MQTT broker is unavailable, 77 when \
            access is denied (or the broker refuses the credentials), 73 when --record PATH \
            cannot be created, 74 when the recording failed during the run (a full disk: it \
            was not kept) and watching ended well.
            """
    )

    @OptionGroup public var arguments: WatchArguments

    @OptionGroup(title: "Logging") public var log: LogOptions

    @OptionGroup public var recordFile: RecordFileOption

    public init() {}

    public mutating func run() async throws {
        StandardOutput.prepare()
        try arguments.applyConfigFile(command: "watch")
        let status = await WatchSession.run(
            arguments.options(command: "watch", recording: recordFile.recording))
        if status != 0 { throw ExitCode(status) }
    }
}
