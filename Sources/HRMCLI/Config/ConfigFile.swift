import MQTT
import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#endif

/// Where the config file is, and reading it into a checked `Configuration`.
public enum ConfigFile {
    /// `$XDG_CONFIG_HOME/hrm/config.toml`, else `~/.config/hrm/config.toml`; nil when neither
    /// XDG_CONFIG_HOME (absolute, as the XDG rules want it) nor HOME says where.
    static func defaultPath(environment: [String: String]) -> String? {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return config + "/hrm/config.toml"
        }
        if let home = environment["HOME"], !home.isEmpty {
            return home + "/.config/hrm/config.toml"
        }
        return nil
    }

    static var defaultPath: String? {
        var environment: [String: String] = [:]
        for key in ["XDG_CONFIG_HOME", "HOME"] {
            if let value = getenv(key) { environment[key] = String(cString: value) }
        }
        return defaultPath(environment: environment)
    }

    /// A config file is a few lines; anything this big is not one (and `/dev/zero` ends here).
    static let sizeLimit = 64 * 1024

    /// The settings in the file at `path`. A missing file is no settings unless `required` (a
    /// file named by `--config`), when it is an error like any file that cannot be read.
    static func load(_ path: String, required: Bool) throws(ConfigError) -> (Configuration, [ConfigWarning]) {
        guard let (bytes, mode) = try contents(of: path, required: required) else {
            return (Configuration(), [])
        }
        var (file, warnings) = try parse(bytes, path: shown(path))
        file.path = path
        if let warning = exposedPassword(file, mode: mode, path: shown(path)) { warnings.append(warning) }
        return (file, warnings)
    }

    /// A broker password in a file that others than its owner may read (as ssh and netrc
    /// readers warn): said, with the command that fixes it; the settings are used all the same.
    static func exposedPassword(_ file: Configuration, mode: mode_t, path: String) -> ConfigWarning? {
        guard let url = file.mqtt.url, (try? MQTTBrokerURL(parsing: url))?.password != nil,
            mode & (S_IRGRP | S_IROTH) != 0
        else { return nil }
        let octal = String(mode & 0o777, radix: 8)
        let readers = mode & S_IROTH != 0 ? "every user" : "its group"
        return ConfigWarning(
            path: path, line: nil,
            message:
                "holds the MQTT broker's password and \(readers) can read it (mode \(octal)): chmod 600 \(path)"
        )
    }

    /// The settings in `bytes`, the contents of the file at `path` (for messages).
    static func parse(_ bytes: [UInt8], path: String) throws(ConfigError) -> (Configuration, [ConfigWarning])
    {
        let text = try checkedText(bytes, path: path)
        let entries: [ConfigEntry]
        do throws(TOMLDocument.SyntaxError) {
            entries = try TOMLDocument.parse(text)
        } catch {
            throw ConfigError(
                .syntax, path, line: error.line > 0 ? error.line : nil,
                column: error.column > 0 ? error.column : nil,
                "not valid TOML: " + lowercasedFirst(error.message))
        }
        return try Configuration.read(entries, path: path)
    }

    /// toml++'s "Error while parsing …" as the rest of a message: "error while parsing …".
    private static func lowercasedFirst(_ text: String) -> String {
        guard let first = text.first else { return text }
        return first.lowercased() + text.dropFirst()
    }

    /// The path as messages show it.
    static func shown(_ path: String) -> String {
        TerminalText.sanitised(path, limit: TerminalText.messageLimit)
    }

    /// The bytes as text, or where they are not: invalid UTF-8, or a NUL (raw or escaped): no
    /// setting takes one, and a C string of it would end there.
    static func checkedText(_ bytes: [UInt8], path: String) throws(ConfigError) -> String {
        var line = 1
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var text = ""
        text.reserveCapacity(bytes.count)
        decoding: while true {
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                if scalar == "\0" {
                    throw ConfigError(.notText, path, line: line, "a NUL character is not text")
                }
                if scalar == "\n" { line += 1 }
                text.unicodeScalars.append(scalar)
            case .emptyInput:
                break decoding
            case .error:
                throw ConfigError(.notText, path, line: line, "not UTF-8 text")
            }
        }
        for (number, content) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
        where content.contains("\\u0000") || content.contains("\\U00000000") {
            throw ConfigError(.notText, path, line: number + 1, "a NUL character (\\u0000) is not allowed")
        }
        return text
    }

    /// The file's bytes and its mode; nil when it does not exist and is not `required`.
    ///
    /// Opened without blocking (a FIFO would block `open` for good) and read only when it is a
    /// regular file or a character device (`--config /dev/null`: no settings) of at most
    /// `sizeLimit` bytes.
    static func contents(of path: String, required: Bool) throws(ConfigError) -> (
        bytes: [UInt8], mode: mode_t
    )? {
        let shown = shown(path)
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT && !required { return nil }
            throw ConfigError(
                .unreadable, shown, "cannot read the config file: \(String(cString: strerror(code)))")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw ConfigError(
                .unreadable, shown, "cannot read the config file: \(String(cString: strerror(errno)))")
        }
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG || kind == S_IFCHR else {
            let what = kind == S_IFDIR ? "a directory" : "not a regular file"
            throw ConfigError(.unreadable, shown, "cannot read the config file: \(what)")
        }
        var bytes = [UInt8](repeating: 0, count: sizeLimit + 1)
        var count = 0
        while count < bytes.count {
            let got = bytes.withUnsafeMutableBufferPointer { buffer in
                guard let base = buffer.baseAddress else { return 0 }
                return read(fd, base + count, buffer.count - count)
            }
            if got < 0 {
                let code = errno
                if code == EINTR { continue }
                throw ConfigError(
                    .unreadable, shown, "cannot read the config file: \(String(cString: strerror(code)))")
            }
            if got == 0 { break }
            count += got
        }
        guard count <= sizeLimit else {
            throw ConfigError(.unreadable, shown, "larger than \(sizeLimit / 1024) KiB: not a config file")
        }
        // A character device (`/dev/null`) is no one's file to protect.
        return (Array(bytes[..<count]), kind == S_IFREG ? status.st_mode : 0)
    }
}
