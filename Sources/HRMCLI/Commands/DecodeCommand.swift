public import ArgumentParser
import InputFiles
import Monitor
import Outputs
import SessionLibrary

#if canImport(Glibc)
    import Glibc
#endif

/// `hrm decode`: raw characteristic values in, decoded values out. No Bluetooth involved.
public struct DecodeCommand: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "decode",
        abstract: "Decode raw characteristic values (captures, debugging, tests).",
        discussion: """
            Each PAYLOAD is one characteristic value in hex. These are all the same two bytes: \
            0648, "06 48", 06:48, 0x06,0x48. An empty argument ("") is an empty frame. With no \
            PAYLOAD, hrm reads one payload per line from standard input (blank lines and lines \
            starting with # are skipped).

            Heart Rate Measurement (2a37) is decoded as the Heart Rate Service 1.0 defines it: \
            little-endian values, energy expended before the RR intervals, RR intervals in units \
            of 1/1024 s (shown as exact milliseconds).

            Examples:
              hrm decode 16484d03
              hrm decode --json 0e4801 "19 2c 01 ff ff 00 04"
              hrm decode --characteristic 2a38 01
              cat capture.txt | hrm decode --json

            Exit status: 0 when every payload decoded, 65 when any was malformed (each gets a \
            message on stderr, or an "error" line with --json, and the run goes on) or a line \
            of standard input is longer than 64 KiB (the run stops there), 64 when a payload is \
            not valid hex.
            """
    )

    @Argument(help: ArgumentHelp("Characteristic values in hex.", valueName: "payload"))
    public var payloads: [String] = []

    @Option(
        name: [.customShort("c"), .long],
        help:
            "Which characteristic the payloads are: 2a37 (heart rate measurement), 2a38 (body sensor location) or 2a19 (battery level)."
    )
    public var characteristic: DecodableCharacteristic = .measurement

    @Flag(help: "Print one JSON object per line instead of text.")
    public var json = false

    public init() {}

    public func run() throws {
        StandardOutput.prepare()
        let output = LineWriter()
        var run = DecodeRun(
            output: output,
            characteristic: characteristic,
            renderer: json ? DecodeJSONRenderer() : DecodeTextRenderer(),
            json: json)

        if payloads.isEmpty {
            StandardOutput.hintWhenTyped(
                "hrm decode: reading payloads from standard input, one a line in hex (0e4801); Ctrl-D ends")
            // The shared bounded reader: a line that never ends (a device, a binary file) is an
            // error at 64 KiB instead of a process that grows until the machine runs out.
            var reader = LineReader(descriptor: STDIN_FILENO, source: "standard input")
            do throws(InputError) {
                while var bytes = try reader.next() {
                    if bytes.last == UInt8(ascii: "\r") { bytes.removeLast() }
                    let trimmed = String(decoding: bytes, as: UTF8.self).trimmingSpaces
                    if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
                    run.handle(text: trimmed, source: "line \(reader.lineNumber)")
                }
                if reader.tornTail > 0 {
                    StandardOutput.diagnostic(
                        "hrm decode: warning: standard input ends in \(reader.tornTail) NUL bytes: ignored")
                }
            } catch {
                output.flush()
                StandardOutput.diagnostic("hrm decode: \(error)")
                throw ExitCode(error.isUnreadable ? 66 : 65)  // EX_NOINPUT, EX_DATAERR
            }
        } else {
            // Refuse bad hex before printing anything: a usage error, not a malformed frame.
            var frames: [[UInt8]] = []
            for (index, payload) in payloads.enumerated() {
                do {
                    frames.append(try HexPayload.parse(payload))
                } catch {
                    StandardOutput.diagnostic(
                        "hrm decode: payload \(index + 1) is not valid hex: \(error)\n\(error.pointing(into: payload))"
                    )
                    throw ExitCode(64)
                }
            }
            for frame in frames { run.handle(bytes: frame) }
        }
        output.flush()
        if run.invalidHex > 0 { throw ExitCode(64) }
        if run.malformed > 0 { throw ExitCode(65) }
    }
}

/// The state of one `hrm decode` run: what it printed and what failed.
private struct DecodeRun {
    let output: LineWriter
    let characteristic: DecodableCharacteristic
    let renderer: any DecodeRenderer
    let json: Bool
    private(set) var malformed = 0
    private(set) var invalidHex = 0
    private var index = 0

    init(
        output: LineWriter, characteristic: DecodableCharacteristic, renderer: any DecodeRenderer, json: Bool
    ) {
        self.output = output
        self.characteristic = characteristic
        self.renderer = renderer
        self.json = json
    }

    /// A line from standard input: bad hex is reported and the run goes on.
    mutating func handle(text: String, source: String) {
        do {
            handle(bytes: try HexPayload.parse(text))
        } catch {
            invalidHex += 1
            StandardOutput.diagnostic(
                "hrm decode: \(source) is not valid hex: \(error)\n\(error.pointing(into: text))")
            if json {
                var line = JSONLine(type: "error")
                line.add("code", "invalid_hex")
                line.add("message", "\(source) is not valid hex: \(error)")
                line.add("input", text)
                output.line(line.line)
            }
        }
    }

    mutating func handle(bytes: [UInt8]) {
        index += 1
        switch PayloadDecoding.decode(bytes, as: characteristic) {
        case .success(let value):
            output.line(renderer.value(value, bytes: bytes))
        case .failure(let failure):
            malformed += 1
            if let line = renderer.failure(failure, bytes: bytes) {
                output.line(line)
            } else {
                StandardOutput.diagnostic(
                    "hrm decode: payload \(index) (\(bytes.isEmpty ? "empty" : HexPayload.format(bytes))): \(failure.message) [\(failure.code)]"
                )
            }
        }
    }
}
