public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// `hrm forget`: stop remembering the last device watched.
public struct ForgetCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "forget",
        abstract: "Forget the last device watched.",
        discussion: """
            hrm watch without DEVICE uses the last device it watched (remembered in \
            $XDG_STATE_HOME/hrm/last-device); when that one is not around it takes the strongest \
            monitor and says so. After hrm forget it takes the strongest from the start.

            Exit status: 0 when it is forgotten (or nothing was remembered), 73 when the file \
            cannot be removed.
            """
    )

    public init() {}

    public func run() throws {
        guard let store = DeviceFinder.stateStore, let remembered = store.lastDevice() else {
            print("hrm remembers no device")
            return
        }
        switch store.forget() {
        case nil, true?:
            print("forgot \(TerminalText.sanitised(remembered, limit: TerminalText.nameLimit))")
        case false?:
            StandardOutput.diagnostic("hrm forget: cannot remove \(store.lastDevicePath)")
            throw ExitCode(73)
        }
    }
}
