import Foundation

/// A recording of two straps made by hand, as `hrm watch --all --record` writes one: both straps'
/// lines interleaved, each naming its `device`; strap A drops for 3 s halfway, strap B keeps
/// streaming and has a missed beat for the artefact correction to split.
enum TwoStrapsRecording {
    static let a = "C0:FF:EE:00:00:01"
    static let b = "C0:FF:EE:00:00:02"
    static let nameA = "HRM-Pro:123456"
    static let nameB = "TICKR 1A2B"

    static let header =
        #"{"type":"recording","format":1,"hrm":"0.1.0","start":"2026-11-23T10:00:00.000Z","command":"watch"}"#

    /// The recording's lines, header first.
    static func lines(seconds: Int = 120) -> [String] {
        var lines = [header, status(0, nil, "scanning")]
        lines += [status(100, a, "connecting"), status(150, b, "connecting")]
        lines += [status(400, a, "connected"), info(420, a, nameA)]
        lines += [status(600, b, "connected"), info(620, b, nameB)]
        var beatA = 0
        var beatB = 0
        for second in 1...seconds {
            let at = second * 1000
            let dropped = (60...62).contains(second)
            if second == 60 {
                lines += [status(at - 10, a, "disconnected"), status(at - 5, a, "reconnecting")]
            }
            if second == 63 { lines.append(status(at - 10, a, "connected")) }
            if !dropped {
                // About 130 bpm: two beats a second.
                let ticks = (0..<2).map { _ in
                    defer { beatA += 1 }
                    return 470 + (beatA * 37) % 41 - 20 + (beatA.isMultiple(of: 2) ? 6 : 0)
                }
                lines.append(measurement(at, a, bpm: 130 + second % 3, ticks: ticks))
            }
            // About 90 bpm; at 80 s a missed beat (twice the interval).
            let count = second.isMultiple(of: 3) ? 2 : 1
            let ticks = (0..<count).map { _ in
                defer { beatB += 1 }
                let tick = 680 + (beatB * 53) % 61 - 30
                return second == 80 ? tick * 2 : tick
            }
            lines.append(measurement(at + 400, b, bpm: 90 - second % 2, ticks: ticks))
        }
        let end = (seconds + 1) * 1000
        lines.append(#"{"type":"summary","time":"\#(time(end))","device":"\#(a)","measurements":1}"#)
        lines.append(#"{"type":"summary","time":"\#(time(end))","device":"\#(b)","measurements":1}"#)
        lines.append(#"{"type":"status","time":"\#(time(end))","state":"stopped","detail":"done"}"#)
        return lines
    }

    static func text(_ lines: [String]) -> String { lines.joined(separator: "\n") + "\n" }

    /// The lines of one strap alone: its own and those that name no strap (the header, scanning,
    /// the last stopped), as a recording of that strap alone would have them.
    static func alone(_ device: String, _ lines: [String]) -> [String] {
        lines.filter { !$0.contains(#""device":"#) || $0.contains(#""device":"\#(device)""#) }
    }

    /// As `watch --json` printed them: no header, no `hex` (hrv reads `rr_ms`).
    static func watchJSON(_ lines: [String]) -> [String] {
        lines.dropFirst().map { line in
            guard let hex = line.range(of: #","hex":""#) else { return line }
            return String(line[..<hex.lowerBound]) + "}"
        }
    }

    /// `2026-11-23T10:01:02.345Z` for milliseconds after the start.
    static func time(_ milliseconds: Int) -> String {
        func two(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let fraction = milliseconds % 1000
        let digits = fraction < 10 ? "00\(fraction)" : fraction < 100 ? "0\(fraction)" : "\(fraction)"
        let seconds = milliseconds / 1000
        return
            "2026-11-23T\(two(10 + seconds / 3600)):\(two(seconds / 60 % 60)):\(two(seconds % 60)).\(digits)Z"
    }

    static func status(_ at: Int, _ device: String?, _ state: String) -> String {
        let named = device.map { #","device":"\#($0)""# } ?? ""
        return #"{"type":"status","time":"\#(time(at))"\#(named),"state":"\#(state)"}"#
    }

    static func info(_ at: Int, _ device: String, _ name: String) -> String {
        #"{"type":"info","time":"\#(time(at))","device":"\#(device)","name":"\#(name)","location":"chest","battery":80}"#
    }

    /// A measurement with its payload: flags 0x10 (RR present, UINT8 heart rate), the rate, then
    /// each RR interval in 1/1024 s, little-endian.
    static func measurement(_ at: Int, _ device: String, bpm: Int, ticks: [Int]) -> String {
        var bytes = [0x10, bpm]
        for tick in ticks { bytes += [tick & 0xFF, tick >> 8] }
        let hex = bytes.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        let ms = ticks.map { String(Double($0) * 1000 / 1024) }.joined(separator: ",")
        let rr = ticks.map(String.init).joined(separator: ",")
        return
            #"{"type":"measurement","time":"\#(time(at))","device":"\#(device)","bpm":\#(bpm),"contact":"detected","energy_kj":null,"rr_1024":[\#(rr)],"rr_ms":[\#(ms)],"format":"uint8","zone":null,"hex":"\#(hex)"}"#
    }

    /// `watch --csv`'s rows for the measurements of `lines`.
    static func csv(_ lines: [String]) -> String {
        var rows = ["time,device,bpm,contact,energy_kj,rr_1024,rr_ms,format,zone"]
        for line in lines where line.hasPrefix(#"{"type":"measurement""#) {
            func field(_ key: String, _ end: Character) -> String {
                guard let start = line.range(of: #""\#(key)":"#) else { return "" }
                let rest = line[start.upperBound...]
                return String(rest.prefix { $0 != end })
            }
            let time = field("time", ",").replacingOccurrences(of: "\"", with: "")
            let device = field("device", ",").replacingOccurrences(of: "\"", with: "")
            let rr1024 = field("rr_1024", "]").dropFirst().replacingOccurrences(of: ",", with: " ")
            let rrMS = field("rr_ms", "]").dropFirst().replacingOccurrences(of: ",", with: " ")
            rows.append("\(time),\(device),\(field("bpm", ",")),detected,,\(rr1024),\(rrMS),uint8,")
        }
        return rows.joined(separator: "\n") + "\n"
    }
}
