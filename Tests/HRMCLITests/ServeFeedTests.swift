import ArgumentParser
import Foundation
import HeartRate
import MQTT
import Synchronization
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// `hrm serve`'s feed without a server: what a client that comes in the middle gets first, what
/// every client gets after, /api/current; and the serving options.
@Suite struct ServeFeedTests {
    let time = Timestamp(millisecondsSinceEpoch: 1_795_335_429_123)
    let a = "C0:FF:EE:00:00:01"
    let b = "C0:FF:EE:00:00:02"

    final class Collector: FeedListener {
        let lines = Mutex<[String]>([])
        func receive(_ line: String) { lines.withLock { $0.append(line) } }
    }

    func event(_ device: String?, _ kind: MonitorEvent.Kind) -> MonitorEvent {
        MonitorEvent(time: time, device: device, kind: kind)
    }

    func measurement(_ bpm: UInt8) throws -> MonitorEvent.Kind {
        .measurement(try HeartRateMeasurement(decoding: [0x00, bpm]))
    }

    /// Each strap's last status, info, battery and measurement, in the order the straps came;
    /// nothing older; then every later event, once.
    @Test func aLateClientGetsTheCurrentStateThenEverything() throws {
        let feed = LiveFeed()
        let events = [
            event(nil, .status(.scanning, detail: nil)),
            event(a, .status(.connecting, detail: nil)),
            event(a, .status(.connected, detail: nil)),
            event(a, .info(name: "One", location: .chest, battery: 80, manufacturer: nil, model: nil)),
            event(a, try measurement(70)),
            event(b, .status(.connected, detail: nil)),
            event(a, try measurement(71)),
            event(a, .battery(percent: 79)),
            event(b, try measurement(90)),
        ]
        for event in events { feed.take(event) }
        let lines = events.map(MonitorEventJSON.line)
        let late = Collector()
        let first = feed.add(late)
        #expect(first == [lines[0], lines[2], lines[3], lines[7], lines[6], lines[5], lines[8]])
        let next = event(b, try measurement(91))
        feed.take(next)
        #expect(late.lines.withLock { $0 } == [MonitorEventJSON.line(next)])
        feed.remove(late)
        feed.take(event(b, try measurement(92)))
        #expect(late.lines.withLock { $0.count } == 1)
        #expect(feed.listenerCount == 0)
    }

    /// A measurement from before a drop is not the heart rate now: a client that comes during the
    /// drop gets the status, not the old measurement; /api/current says null.
    @Test func aDropClearsTheCurrentMeasurement() throws {
        let feed = LiveFeed()
        feed.take(event(a, .status(.connected, detail: nil)))
        feed.take(event(a, try measurement(70)))
        let drop = event(a, .status(.reconnecting, detail: "link lost"))
        feed.take(drop)
        #expect(feed.add(Collector()) == [MonitorEventJSON.line(drop)])
        let strap = (Self.object(feed.current())["straps"] as? [[String: Any]])?.first ?? [:]
        #expect(strap["state"] as? String == "reconnecting")
        #expect(strap["measurement"] is NSNull)
        #expect((strap["session"] as? [String: Any])?["measurements"] as? Int == 1)
    }

    /// `{"straps":[...]}`: one object per strap, its state, battery, last measurement (the very
    /// object of the feed) and the session's min/avg/max of heart rates above 0.
    @Test func apiCurrent() throws {
        let feed = LiveFeed()
        #expect(feed.current() == #"{"straps":[]}"#)
        feed.take(event(a, .status(.connected, detail: nil)))
        feed.take(
            event(
                a, .info(name: "One \"quoted\"", location: .chest, battery: 80, manufacturer: nil, model: nil)
            ))
        for bpm: UInt8 in [70, 0, 73, 72] { feed.take(event(a, try measurement(bpm))) }
        feed.take(event(a, .battery(percent: 79)))
        feed.take(event(b, .status(.connecting, detail: nil)))
        let straps = Self.object(feed.current())["straps"] as? [[String: Any]] ?? []
        #expect(straps.count == 2)
        let one = straps.first ?? [:]
        #expect(one["device"] as? String == a)
        #expect(one["name"] as? String == "One \"quoted\"")
        #expect(one["state"] as? String == "connected")
        #expect(one["battery"] as? Int == 79)
        #expect((one["measurement"] as? [String: Any])?["bpm"] as? Int == 72)
        let session = one["session"] as? [String: Any] ?? [:]
        #expect(session["measurements"] as? Int == 3)
        #expect(session["min_bpm"] as? Int == 70)
        #expect(session["avg_bpm"] as? Double == 71.67)
        #expect(session["max_bpm"] as? Int == 73)
        let two = straps.last ?? [:]
        #expect(two["device"] as? String == b)
        #expect(two["name"] is NSNull && two["battery"] is NSNull && two["measurement"] is NSNull)
        #expect(two["state"] as? String == "connecting")
        #expect((two["session"] as? [String: Any])?["avg_bpm"] is NSNull)
    }

    /// `serve --mqtt-team`: what a host publishes is parsed and written again, never spliced. A
    /// retained payload with a leading newline made /api/current invalid JSON for every strap, and
    /// CR/LF inside one split an SSE event over lines; a host's name with a quote is escaped.
    @Test func teamPayloadsAreWrittenAgainNotSpliced() throws {
        let feed = LiveFeed()
        let listener = Collector()
        _ = feed.add(listener)
        let measurement =
            "\n {\"type\":\"measurement\",\r\n\"time\":\"2026-11-25T10:00:00.000Z\",\r\n"
            + "\"device\":\"C0:FF:EE:00:00:01\",\"bpm\":72,\"rr_ms\":[812.5],\"note\":\"a\\nb\"}\r\n"
        let info = #"{"type":"info","device":"C0:FF:EE:00:00:01","name":"Bike \"One\"","source":"forged"}"#
        for (topic, payload) in [
            ("hrm/bike-1/c0ffee000001/measurement", measurement),
            (#"hrm/bi"ke/c0ffee000001/info"#, info),
        ] {
            TeamFeed.take(MQTTMessage(topic: topic, payload: Array(payload.utf8)), into: feed)
        }
        let current = feed.current()
        let straps = try #require(Self.object(current)["straps"] as? [[String: Any]], "\(current)")
        #expect(straps.count == 2, "\(current)")
        let bike = straps.first { $0["source"] as? String == "bike-1" } ?? [:]
        let last = bike["measurement"] as? [String: Any] ?? [:]
        #expect(last["bpm"] as? Int == 72 && last["source"] as? String == "bike-1", "\(current)")
        #expect(last["note"] as? String == "a\nb")
        let lines = listener.lines.withLock { $0 }
        #expect(lines.count == 2)
        for line in lines {
            #expect(!line.contains("\n") && !line.contains("\r"), "one line per event: \(line)")
            #expect(line.hasPrefix(#"{"source":"#), "\(line)")
            #expect(!Self.object(line).isEmpty, "valid JSON: \(line)")
        }
        let named = Self.object(lines.last ?? "")
        #expect(named["source"] as? String == #"bi"ke"#, "the topic's host, not the payload's")
        #expect(named["name"] as? String == #"Bike "One""#)
        #expect(
            lines.first
                == #"{"source":"bike-1","type":"measurement","time":"2026-11-25T10:00:00.000Z","device":"C0:FF:EE:00:00:01","bpm":72,"rr_ms":[812.5],"note":"a\nb"}"#
        )
    }

    @Test func listenAddresses() {
        #expect(ListenAddress("127.0.0.1:8757") == ListenAddress(host: "127.0.0.1", port: 8757))
        #expect(ListenAddress(":9000") == ListenAddress(host: "0.0.0.0", port: 9000))
        #expect(ListenAddress("[::1]:8757") == ListenAddress(host: "::1", port: 8757))
        #expect(ListenAddress("localhost:0") == ListenAddress(host: "localhost", port: 0))
        for bad in ["8757", "::1:8757", "[127.0.0.1]:80", "host:65536", "host:-1", "ho st:80", "h/x:80", ":"]
        {
            #expect(ListenAddress(bad) == nil, "\(bad)")
        }
        #expect(ListenAddress(host: "::1", port: 8757).url == "http://[::1]:8757/")
        // Every interface: the address itself, never `localhost` (anyone who reaches the machine can read it).
        #expect(ListenAddress(host: "0.0.0.0", port: 80).url == "http://0.0.0.0:80/")
        #expect(
            ListenAddress(":80")?.isEveryInterface == true
                && ListenAddress("[::]:80")?.isEveryInterface == true)
        #expect(ListenAddress("127.0.0.1:80")?.isEveryInterface == false)
        #expect(ListenAddress(host: "::1", port: 8757).description == "[::1]:8757")
    }

    @Test func servingOptions() throws {
        let defaults = try ServeArguments.parse([])
        #expect(defaults.address == ListenAddress(host: "127.0.0.1", port: 8757))
        #expect(defaults.maxClients == 64 && defaults.allowOrigin.isEmpty && !defaults.verbose)
        let given = try ServeArguments.parse([
            "--listen", ":0", "--allow-origin", "https://overlay.example", "--allow-origin", "null",
            "--max-clients", "3", "--verbose",
        ])
        #expect(given.address.port == 0 && given.allowOrigin.count == 2 && given.maxClients == 3)
        #expect(defaults.allowHost.isEmpty && defaults.headTimeoutSeconds == 10)
        let hosts = try ServeArguments.parse([
            "--allow-host", "studio.lan", "--allow-host", "192.168.1.20", "--head-timeout", "2.5",
        ])
        #expect(hosts.allowHost == ["studio.lan", "192.168.1.20"] && hosts.headTimeoutSeconds == 2.5)
        for bad in [
            ["--listen", "nowhere"], ["--max-clients", "0"], ["--allow-origin", "overlay.example"],
            ["--offline-text", String(repeating: "x", count: 201)], ["--allow-host", "evil.example/x"],
            ["--allow-host", ""], ["--mqtt-team", "mqtt://broker.example", "--record", "x.jsonl"],
            ["--head-timeout", "0"], ["--head-timeout", "2h"],
            ["--head-timeout", "-1"],
        ] {
            #expect(throws: (any Error).self, "\(bad)") { try ServeArguments.parse(bad) }
        }
    }

    static func object(_ text: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]) ?? [:]
    }
}
