public import ArgumentParser
import Monitor
import Outputs
import SessionLibrary

/// `hrm config`: where the config file is, and what hrm reads in it.
public struct ConfigCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "config",
        abstract: "Show the config file's path and the defaults hrm reads from it.",
        discussion: """
            hrm scan, watch, record, serve, team and reset-energy take defaults from \
            $XDG_CONFIG_HOME/hrm/config.toml (by default ~/.config/hrm/config.toml), a TOML \
            file whose keys are the long options' names (see the README); an option on the \
            command line overrides the file, --config FILE reads another file and --no-config \
            none. This prints the file's settings as hrm understood them, after checking them \
            (a password in the MQTT URL hidden); --path prints only where the file is.

            Exit status: 0 when the file is good or there is none, 66 when the file cannot be \
            read, 78 when it is not valid (the message names the line).
            """
    )

    @Flag(help: "Print only the config file's path.")
    public var path = false

    @OptionGroup public var configFile: ConfigOptions

    public init() {}

    public func run() throws {
        guard let location = configFile.path else {
            if !path { print("# no config file (--no-config, or neither XDG_CONFIG_HOME nor HOME is set)") }
            return
        }
        if path {
            print(location)
            return
        }
        let file = try configFile.load(command: "config")
        guard file.path != nil else {
            print("# no config file at \(TerminalText.sanitised(location, limit: TerminalText.messageLimit))")
            return
        }
        print("# \(TerminalText.sanitised(location, limit: TerminalText.messageLimit))")
        for line in ConfigRendering.toml(file) { print(line) }
    }
}
