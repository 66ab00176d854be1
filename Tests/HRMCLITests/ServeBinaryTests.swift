import Foundation
import Testing

/// `hrm serve` under hrm-sim with real clients (see `ServeHarness` below): what they get, who is
/// let in, a client that stops reading, the client cap, request limits, stopping, a port in use.
@Suite struct ServeBinaryTests {
    typealias Harness = ServeHarness
    typealias Client = ServeHarness.Client

    /// A new folder of the test's own under the temporary directory; the test removes it.
    static func temporaryDirectory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hrm-serve-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    static func clients(_ run: Harness.Run, _ key: String) -> [Client] {
        (run.report[key] as? [Any] ?? []).map(Client.init)
    }

    /// SSE and WebSocket clients there from the start get every line `hrm serve --json` prints
    /// (the same text), in order; each measurement is a notification hrm-sim sent, none lost.
    /// Clients that come in the middle get the current state first (the strap's status, info and
    /// last measurement), then the live lines. /api/current has the strap and its session so far.
    @Test(.timeLimit(.minutes(2))) func feedsCarryWhatWatchPrints() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = directory.appendingPathComponent("serve.jsonl")
        let run = try await Harness.run(
            "feed", devices: [Harness.strap(interval: 0.05)],
            serve: [Harness.address, "--json", "--record", recording.path])
        #expect(run.status == 0, "\(run.summary)")
        // --record as watch's: every measurement, with its notification's payload.
        let recorded = WatchBinaryTests.lines((try? String(contentsOf: recording, encoding: .utf8)) ?? "")
        #expect(recorded.first?["type"] as? String == "recording")
        #expect(
            recorded.filter { $0["type"] as? String == "measurement" && $0["hex"] != nil }.count
                == run.stdoutMeasurements.count)
        let printed = run.stdout
        let measurements = run.stdoutMeasurements
        let bpms = measurements.compactMap(Harness.bpm)
        let sent = run.sentAt
        #expect(measurements.count >= 10, "\(run.summary)")
        #expect(bpms.allSatisfy { sent[$0] != nil }, "every measurement is a notification hrm-sim sent")
        #expect(Harness.consecutive(bpms), "\(bpms)")
        let early = Self.clients(run, "early")
        let late = Self.clients(run, "late")
        #expect(early.count == late.count && !early.isEmpty, "\(run.summary)")
        if early.count < 2 { _ = Harness.webSocketChecks(run, "the feed") }

        for client in early {
            #expect(
                client.status == (client.report["kind"] as? String == "sse" ? 200 : 101), "\(client.report)")
            let lines = client.lines
            guard let start = printed.firstIndex(of: lines.first ?? "") else {
                Issue.record(
                    "\(client.report["kind"] ?? "?"): its first line was not printed: \(lines.prefix(2))")
                continue
            }
            // A contiguous run of what hrm printed: from where it joined to (nearly) the end; the
            // summary and the last status come after the clients are closed.
            #expect(Array(printed[start..<min(printed.count, start + lines.count)]) == lines)
            #expect(client.measurements.count >= measurements.count - 2, "\(client.measurements.count)")
        }

        for client in late {
            let lines = client.lines.filter { Harness.object($0)["device"] != nil }
            guard lines.count >= 4 else {
                Issue.record("late \(client.report["kind"] ?? "?"): \(client.report)")
                continue
            }
            let types = lines.prefix(3).map { Harness.object($0)["type"] as? String ?? "?" }
            #expect(
                types == ["status", "info", "measurement"], "the current state first: \(lines.prefix(3))")
            #expect(Harness.object(lines[0])["state"] as? String == "connected")
            #expect(printed.contains(lines[0]) && printed.contains(lines[1]))
            #expect(lines[2] != measurements.first, "it came in the middle")
            guard let at = printed.firstIndex(of: lines[2]) else {
                Issue.record("its current measurement was not printed")
                continue
            }
            let live = Array(lines[2...])
            #expect(Array(printed[at..<min(printed.count, at + live.count)]) == live)
        }

        let current = run["current"]
        #expect(current["status"] as? Int == 200)
        #expect((current["headers"] as? [String: String])?["content-type"] == "application/json")
        let straps = Harness.object(current["body"] as? String ?? "")["straps"] as? [[String: Any]] ?? []
        #expect(straps.count == 1, "\(current)")
        let strap = straps.first ?? [:]
        #expect(strap["device"] as? String == Harness.address)
        #expect(strap["name"] as? String == "Serve Strap")
        #expect(strap["state"] as? String == "connected")
        #expect(strap["battery"] as? Int == 77)
        let last = strap["measurement"] as? [String: Any] ?? [:]
        #expect(last["type"] as? String == "measurement")
        #expect((last["bpm"] as? Int).map { sent[$0] != nil } == true)
        let session = strap["session"] as? [String: Any] ?? [:]
        #expect((session["measurements"] as? Int ?? 0) >= 8, "\(session)")
        #expect(session["min_bpm"] as? Int == bpms.first, "\(session)")
        #expect((session["max_bpm"] as? Int ?? 0) >= (session["min_bpm"] as? Int ?? .max))
    }

    /// A WebSocket from a page of another site: 403 and why; one from an --allow-origin site, from
    /// the page's own origin (127.0.0.1 or localhost) or from a program (no Origin): in. A Host
    /// that is not a loopback name (DNS rebinding) is refused on loopback. CORS only for
    /// --allow-origin sites.
    @Test(.timeLimit(.minutes(2))) func originsAndHosts() async throws {
        let run = try await Harness.run(
            "origin", devices: [Harness.strap(interval: 0.25)],
            serve: [Harness.address, "--json", "--allow-origin", "https://overlay.example"])
        #expect(run.status == 0, "\(run.summary)")
        let foreign = Client(run["raw_foreign"])
        #expect(foreign.status == 403, "\(foreign.report)")
        #expect(foreign.body.contains("'https://evil.example' is not allowed"), "\(foreign.body)")
        #expect(foreign.body.contains("--allow-origin"))
        #expect(Client(run["raw_rebinding"]).status == 403)
        #expect(Client(run["raw_rebinding"]).body.contains("DNS rebinding"))
        #expect(Client(run["page_rebinding"]).status == 403)
        #expect(Client(run["page_localhost"]).status == 200)
        #expect(Client(run["two_hosts"]).status == 400)
        #expect(
            run.stderr.contains {
                $0.contains("refused a WebSocket from origin 'https://evil.example' (403)")
            }, "\(run.stderr)")
        #expect(
            Client(run["sse_allowed"]).headers["access-control-allow-origin"] == "https://overlay.example")
        #expect(Client(run["sse_foreign"]).headers["access-control-allow-origin"] == nil)
        guard Harness.webSocketChecks(run, "Origin") else { return }
        let ws = run["ws"]
        let outcome = ws.mapValues { Client($0) }
        #expect(outcome["foreign"]?.status == 403)
        #expect(outcome["foreign"]?.body.contains("is not allowed") == true)
        #expect(outcome["rebinding"]?.status == 403)
        for name in ["allowed", "none", "own", "own_localhost"] {
            #expect(outcome[name]?.status == 101, "\(name): \(outcome[name]?.report ?? [:])")
            #expect((outcome[name]?.measurements.count ?? 0) >= 1, "\(name)")
        }
    }

    /// `--listen 0.0.0.0:0`: the log says so (not `localhost`), and DNS rebinding is kept out as
    /// on loopback: a Host that is not a name of this machine gets 403, page, snapshot and
    /// WebSocket alike (an Origin equal to that Host changes nothing); the machine's host name,
    /// an address of its interfaces, loopback names and an --allow-host are answered.
    @Test(.timeLimit(.minutes(2))) func everyInterfaceAnswersOnlyItsOwnNames() async throws {
        let run = try await Harness.run(
            "beyond", devices: [Harness.strap(interval: 0.25)],
            serve: [Harness.address, "--allow-host", "studio.example"])
        #expect(run.status == 0, "\(run.summary)")
        let port = run.report["port"] as? Int ?? -1
        let hostName = run.report["hostname"] as? String ?? "?"
        #expect(
            run.stderr.contains {
                $0.contains("listening on http://0.0.0.0:\(port)/: every interface")
                    && $0.contains("http://\(hostName):\(port)/")
            }, "\(run.stderr)")
        #expect(!run.stderr.contains { $0.contains("http://localhost:\(port)/") })
        for key in ["rebinding_ws", "rebinding_page", "rebinding_current"] {
            let answer = Client(run[key])
            #expect(answer.status == 403, "\(key): \(answer.report)")
            #expect(
                answer.body.contains("DNS rebinding") && answer.body.contains("--allow-host"),
                "\(answer.body)")
        }
        #expect(
            run.stderr.contains { $0.contains("refused a request for Host 'evil.example:\(port)' (403)") },
            "\(run.stderr)")
        for key in ["loopback", "localhost", "by_name", "allowed"] {
            #expect(Client(run[key]).status == 200, "\(key): \(run[key])")
        }
        #expect(Client(run["by_name_ws"]).status == 101, "\(run["by_name_ws"])")
        if run.report["address"] is String {
            #expect(Client(run["by_address"]).status == 200, "\(run["by_address"])")
        } else {
            print("SKIPPED: a Host that is this machine's address beyond loopback: it has none")
            withKnownIssue("SKIPPED: no address beyond loopback") {
                Issue.record("Host by address not tested")
            }
        }
    }

    /// --max-clients 2: a third feed client gets 503 and a clear text, SSE and WebSocket alike;
    /// when one leaves, there is room again.
    @Test(.timeLimit(.minutes(2))) func theClientCap() async throws {
        let run = try await Harness.run(
            "cap", devices: [Harness.strap(interval: 0.25)],
            serve: [Harness.address, "--json", "--max-clients", "2"])
        #expect(run.status == 0, "\(run.summary)")
        let refusal = "hrm serve: 2 feed clients already (--max-clients); try again later"
        for key in ["third_sse", "third_ws_raw"] {
            let third = Client(run[key])
            #expect(third.status == 503, "\(key): \(third.report)")
            #expect(third.body.contains(refusal), "\(key): \(third.body)")
            #expect(third.headers["retry-after"] == "5")
        }
        #expect(
            run.stderr.contains { $0.contains("refused an SSE client from 127.0.0.1") && $0.contains("503") })
        guard Harness.webSocketChecks(run, "the client cap") else {
            #expect(Client(run["after_leave_sse"]).status == 200)
            return
        }
        #expect(Client(run["third_ws"]).status == 503)
        #expect(Client(run["third_ws"]).body.contains(refusal))
        let again = Client(run["after_leave_ws"])
        #expect(again.status == 101, "\(again.report)")
        #expect(again.measurements.count >= 1)
    }

    /// At 200 notifications/s, a WebSocket and an SSE client that stop reading are dropped within
    /// seconds (their connections closed), while readers beside them get every measurement with a
    /// small delay from hrm-sim's send.
    @Test(.timeLimit(.minutes(2))) func aClientThatStopsReadingDelaysNobody() async throws {
        let run = try await Harness.run(
            "slow", devices: [Harness.strap(interval: 0.005, count: 4000)],
            serve: [Harness.address, "--json"],
            seconds: 10)
        #expect(run.status == 0, "\(run.summary)")
        let closed = run["stalled_closed"]
        #expect(closed["sse"] as? Bool == true, "\(run.summary)")
        #expect(closed["ws"] as? Bool == true, "\(run.summary)")
        let dropped = run.stderr.filter { $0.contains("dropped: it fell 256 events behind") }
        #expect(dropped.count == 2, "\(run.stderr)")
        let sent = run.sentAt
        let lastPrinted = run.stdoutMeasurements.last.flatMap(Harness.bpm) ?? 0
        let readers = Self.clients(run, "readers")
        if readers.count < 2 { _ = Harness.webSocketChecks(run, "a client that stops reading") }
        for reader in readers {
            let kind = reader.report["kind"] as? String ?? "?"
            let bpms = reader.measurements.compactMap(Harness.bpm)
            #expect(bpms.count >= 500, "\(kind): \(bpms.count)")
            #expect(Harness.consecutive(bpms), "\(kind): nothing lost")
            // On a stop the clients are closed first, then the strap is let go (1.5 s at most in
            // between): stdout may print up to that much more than the clients got.
            #expect(
                (bpms.last ?? 0) >= lastPrinted - 300,
                "\(kind): to the end (\(bpms.last ?? 0) of \(lastPrinted))")
            let latencies = Harness.latencies(reader, sentAt: sent)
            let p50 = Harness.percentile(latencies, 0.5)
            let p99 = Harness.percentile(latencies, 0.99)
            let worst = latencies.max() ?? .nan
            print(
                "hrm serve, \(kind) reader beside two stalled clients at 200/s: \(latencies.count) measurements, "
                    + String(format: "latency median %.2f ms, p99 %.2f ms, max %.2f ms", p50, p99, worst))
            // Printed, not bounded: a loaded machine stretches wall time, and latency is
            // `make bench-serve`'s to measure. That nothing was held up is what is checked above:
            // every measurement, in order, to the end.
        }
    }

    /// SIGTERM: every client is closed (WebSocket with 1000), the strap let go as watch does
    /// (released, disconnected), exit 0, promptly: even with clients that stopped reading and a
    /// plain HTTP connection stuck in a write.
    @Test(.timeLimit(.minutes(2))) func sigtermClosesTheClientsThenLetsTheStrapGo() async throws {
        // 50 notifications a second: a reading client would have to be starved for 5 s to fall
        // the 256 events behind that hrm serve drops a client for (at 200 a second, 1.3 s of a
        // loaded CI machine dropped both readers before the signal).
        let run = try await Harness.run(
            "stop", devices: [Harness.strap(interval: 0.02, count: 1000)],
            serve: [Harness.address, "--json"],
            seconds: 1.5)
        #expect(run.status == 0, "\(run.summary)")
        // Exit 0 is an exit within the harness's 60 s after SIGTERM (then it kills: "hung"), which
        // only proves "not hung"; hrm-sim takes 2 s to answer the Disconnect, the clients' grace
        // is 1 s. How soon is not bounded here.
        let closed = run["stalled_closed"]
        #expect(closed["sse"] as? Bool == true && closed["http"] as? Bool == true, "\(closed)")
        if closed["ws"] != nil { #expect(closed["ws"] as? Bool == true) }
        let sigterm = run.report["sigterm"] as? Int ?? 0
        for reader in Self.clients(run, "readers") {
            // Closed by hrm serve after the signal (the harness waits 5 s for it: "not hung").
            let ended = try #require(reader.ended, "\(reader.report["kind"] ?? "?") never ended")
            #expect(ended > sigterm)
            if reader.report["kind"] as? String == "ws" {
                #expect(reader.report["close_code"] as? Int == 1000)
            }
        }
        #expect(
            run.stderr.filter { $0.contains("closed: hrm serve is stopping") }.count >= 3, "\(run.stderr)")
        #expect(run.sim.contains { $0["event"] as? String == "acquire-released" })
        #expect(run.calls("Disconnect").count == 1)
        #expect(
            run.sim.contains {
                $0["event"] as? String == "state" && $0["connected"] as? Bool == false
                    && $0["reason"] as? String == "local"
            })
        #expect(run.stdout.last.map { Harness.object($0)["state"] as? String } == "stopped")
    }

    /// Read-only and small: other methods 405, a body 413, big heads 431, a long target 414, a
    /// malformed request 400; no files (404), /ws without the upgrade 426; each with its text.
    @Test(.timeLimit(.minutes(2))) func requestLimits() async throws {
        let run = try await Harness.run(
            "limits", devices: [Harness.strap(interval: 0.25)], serve: [Harness.address])
        #expect(run.status == 0, "\(run.summary)")
        let expected: [(String, Int, String?)] = [
            ("post", 405, "read-only"), ("head", 405, nil), ("delete", 405, "read-only"),
            ("get_with_body", 413, "no request body"), ("chunked_body", 413, "no request body"),
            ("big_header", 431, "too large"), ("many_headers", 431, "too large"),
            ("long_target", 414, "at most 2048 bytes"), ("unknown", 404, nil), ("traversal", 404, nil),
            ("ws_plain_get", 426, "is a WebSocket"), ("ws_elsewhere", 404, "the feed is /ws"),
            ("garbage", 400, "malformed"), ("huge_body", 405, "read-only"), ("page", 200, "<html"),
            ("current", 200, #"{"straps":["#),
        ]
        for (key, status, text) in expected {
            let answer = Client(run[key])
            #expect(answer.status == status, "\(key): \(answer.report)")
            if let text { #expect(answer.body.contains(text), "\(key): \(answer.body)") }
        }
        #expect(Client(run["post"]).headers["allow"] == "GET")
        #expect(Client(run["post"]).headers["connection"] == "close")
        // Refused on its head, the connection closed: an 8 MiB body is not read.
        let unsent = run["huge_body_unsent"]
        let answers = unsent["answers"] as? [[String: Any]] ?? []
        #expect(answers.first?["status"] as? Int == 405, "\(unsent)")
        #expect(unsent["ended"] as? String == "closed", "\(unsent)")
    }

    /// Requests with `Upgrade` that are not a whole WebSocket handshake: 400 and the reason, and
    /// hrm serve unharmed; one without `Connection: Upgrade` with a request behind it in the same
    /// write was upgraded and then trapped in NIO (exit 132, the recording without its summary).
    /// Pipelined requests with a refused one: every request answered, in order.
    @Test(.timeLimit(.minutes(2))) func handshakesThatAreNotOneAndPipelinedRefusals() async throws {
        let directory = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let recording = directory.appendingPathComponent("serve.jsonl")
        let run = try await Harness.run(
            "hostile", devices: [Harness.strap(interval: 0.25)],
            serve: [Harness.address, "--json", "--record", recording.path])
        #expect(run.status == 0, "\(run.summary)")
        #expect(run.report["alive"] as? Bool == true, "hrm serve still there: \(run.summary)")
        #expect(run.stdout.last.map { Harness.object($0)["state"] as? String } == "stopped")
        let recorded = WatchBinaryTests.lines((try? String(contentsOf: recording, encoding: .utf8)) ?? "")
        #expect(recorded.contains { $0["type"] as? String == "summary" }, "the recording ends whole")
        func answers(_ key: String) -> [Client] {
            ((run[key]["answers"] as? [Any]) ?? []).map(Client.init)
        }
        let refused: [(String, String)] = [
            ("no_connection", "needs Connection: Upgrade"), ("no_key", "one Sec-WebSocket-Key"),
            ("bad_key", "one Sec-WebSocket-Key"), ("version_8", "Sec-WebSocket-Version: 13"),
            ("h2c", "no upgrade to 'h2c' here"),
        ]
        for (key, reason) in refused {
            let got = answers(key)
            #expect(got.map(\.status) == [400], "\(key): \(run[key])")
            #expect(got.first?.body.contains(reason) == true, "\(key): \(got.first?.body ?? "")")
            #expect(got.first?.headers["connection"] == "close", "\(key)")
        }
        #expect(answers("version_8").first?.headers["sec-websocket-version"] == "13")
        let pipelined: [(String, [Int], String)] = [
            ("pipelined_post", [200, 405], "read-only"), ("pipelined_garbage", [200, 400], "malformed"),
            ("pipelined_upgrade", [200, 400], "a connection's first request"),
            ("pipelined_two", [200, 200], "straps"),
        ]
        for (key, statuses, text) in pipelined {
            let got = answers(key)
            #expect(got.map(\.status) == statuses, "\(key): \(run[key])")
            #expect(got.first?.body.hasPrefix(#"{"straps":["#) == true, "\(key): the first answer, whole")
            #expect(got.last?.body.contains(text) == true, "\(key): \(got.last?.body ?? "")")
            #expect(run[key]["ended"] as? String == "closed", "\(key): the connection closed after")
        }
        #expect(Client(run["upgrade_then_request"]).status == 101, "\(run["upgrade_then_request"])")
        #expect(Client(run["after"]).status == 200)
    }

    /// A slowloris: more connections trickling their request heads than hrm serve keeps
    /// connections for. A real client is answered all the same (the deadline here only proves it
    /// was not kept waiting until the tricklers' head deadline, 10 minutes), and the tricklers
    /// that waited longest are closed to make room, which stderr says.
    @Test(.timeLimit(.minutes(3))) func tricklingConnectionsKeepNobodyOut() async throws {
        let run = try await Harness.run(
            "slowloris", devices: [Harness.strap(interval: 0.25)],
            serve: [Harness.address, "--head-timeout", "10m"])
        #expect(run.status == 0, "\(run.summary)")
        let real = Client(run["real"])
        #expect(real.status == 200, "\(run["real"]) after \(run.report["real_seconds"] ?? "?") s")
        #expect(real.body.hasPrefix(#"{"straps":["#))
        #expect(
            (run.report["tricklers_closed"] as? Int ?? 0) >= 1, "\(run.report["tricklers_closed"] ?? "?")")
        #expect(
            run.stderr.contains { $0.contains("connections were waiting for a request head") },
            "\(run.stderr)")
    }

    /// `--head-timeout`: a connection that trickles its first request head, and one that trickles
    /// its next after a whole request was answered, are closed without an answer once the
    /// deadline passes (trickling does not extend it); stderr says why; others are served.
    @Test(.timeLimit(.minutes(2))) func aHeadDeadlineForEveryRequest() async throws {
        let run = try await Harness.run(
            "head-deadline", devices: [Harness.strap(interval: 0.25)],
            serve: [Harness.address, "--head-timeout", "1"])
        #expect(run.status == 0, "\(run.summary)")
        #expect(run.report["first_closed"] as? Bool == true, "\(run.summary)")
        #expect(run.report["first_received"] as? String == "", "closed without an answer")
        let answered = ((run.report["second_answered"] as? [Any]) ?? []).map(Client.init)
        #expect(answered.map(\.status) == [200], "\(run.report["second_answered"] ?? "?")")
        #expect(run.report["second_closed"] as? Bool == true, "\(run.summary)")
        #expect(run.report["second_received"] as? String == "")
        #expect(Client(run["after"]).status == 200)
        #expect(
            run.stderr.contains { $0.contains("no whole request head within 1 s (--head-timeout)") },
            "\(run.stderr)")
    }

    /// Two straps: two entries in /api/current, and the feed carries both.
    @Test(.timeLimit(.minutes(2))) func twoStrapsTwoEntries() async throws {
        let one = "C0:FF:EE:00:00:01"
        let two = "C0:FF:EE:00:00:02"
        let run = try await Harness.run(
            "straps",
            devices: [
                Harness.strap(one, name: "Strap One", interval: 0.2, first: 1000),
                Harness.strap(two, name: "Strap Two", interval: 0.2, first: 2000, battery: nil),
            ], serve: [one, two, "--json"])
        #expect(run.status == 0, "\(run.summary)")
        let straps =
            Harness.object(run["current"]["body"] as? String ?? "")["straps"] as? [[String: Any]] ?? []
        #expect(Set(straps.compactMap { $0["device"] as? String }) == [one, two], "\(straps)")
        #expect(Set(straps.compactMap { $0["name"] as? String }) == ["Strap One", "Strap Two"])
        for strap in straps {
            let bpm = (strap["measurement"] as? [String: Any])?["bpm"] as? Int ?? 0
            #expect(strap["device"] as? String == one ? (1000..<2000).contains(bpm) : bpm >= 2000, "\(strap)")
        }
        let devices = Client(run["reader"]).measurements.compactMap {
            Harness.object($0)["device"] as? String
        }
        #expect(Set(devices) == [one, two])
    }

    /// Another program holds the port: a clear error, exit 69, and no Connect.
    @Test(.timeLimit(.minutes(2))) func aPortInUseIs69BeforeTheStrap() async throws {
        let run = try await Harness.run(
            "port-in-use", devices: [Harness.strap(interval: 0.25)], serve: ["--all"])
        #expect(run.status == 69, "\(run.summary)")
        let port = run.report["port"] as? Int ?? 0
        #expect(
            run.stderr == [
                "hrm serve: cannot listen on 127.0.0.1:\(port): the address is in use (another hrm serve?); choose another port with --listen"
            ], "\(run.stderr)")
        #expect(run.calls("Connect").isEmpty && run.calls("StartDiscovery").isEmpty, "\(run.sim)")
        #expect(run.stdout.isEmpty)
    }

    /// `hrm serve --help` is hrm-serve's, and tells of both the watch options and the serving ones.
    @Test func helpOfBoth() async throws {
        let viaHrm = try await HRMProcess.run(["serve", "--help"])
        let server = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-serve")
        let direct = try await HRMProcess.run(["--help"], executable: server)
        #expect(viaHrm.status == 0 && direct.status == 0)
        #expect(viaHrm.stdout == direct.stdout)
        for text in [
            "USAGE: hrm serve", "--listen <host:port>", "--allow-origin <origin>", "--max-clients <n>",
            "--offline-text <text>", "--verbose", "--record <path>", "--duration", "--mqtt", "GET /events",
            "exit status", "--version",
        ] {
            #expect(viaHrm.stdout.lowercased().contains(text.lowercased()), "\(text) in \(viaHrm.stdout)")
        }
        let bad = try await HRMProcess.run(["serve", "--listen", "nowhere"])
        #expect(bad.status == 64, "\(bad.stderr)")
        #expect(bad.stderr.contains("--listen 'nowhere': give HOST:PORT"), "\(bad.stderr)")
    }

    /// Without hrm-serve beside hrm (nor on PATH): a clear error and 69.
    @Test func withoutHrmServe() async throws {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        if path.split(separator: ":").contains(where: {
            FileManager.default.isExecutableFile(atPath: "\($0)/hrm-serve")
        }) {
            print("SKIPPED: hrm serve without hrm-serve: an hrm-serve is installed on PATH")
            withKnownIssue("SKIPPED: hrm-serve on PATH") {
                Issue.record("hrm serve without hrm-serve not tested")
            }
            return
        }
        // A hard link: /proc/self/exe names the link's folder, where no hrm-serve is.
        let directory = Harness.root.appendingPathComponent(".build/serve-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let alone = directory.appendingPathComponent("hrm")
        try FileManager.default.linkItem(at: HRMProcess.binary, to: alone)
        let result = try await HRMProcess.run(["serve"], executable: alone)
        #expect(result.status == 69)
        #expect(
            result.stderr.contains("hrm-serve is not installed beside hrm nor on PATH"), "\(result.stderr)")
    }
}

/// `hrm serve` as people run it: the built `hrm` (which runs `hrm-serve` beside it) under hrm-sim,
/// with Tests/ServeCheck/serve_check.py as its clients. The script plays one case (SSE and plain
/// HTTP over raw sockets, WebSocket through Python's `websockets` from a venv at
/// `.build/serve-venv` that `.ci/run` prepares, or the first test that needs it), stops hrm with
/// SIGTERM and reports what every client saw, with CLOCK_MONOTONIC times as hrm-sim's log stamps
/// each notification it sends.
enum ServeHarness {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let script = root.appendingPathComponent("Tests/ServeCheck/serve_check.py")
    static var venvPython: URL { venv.python }
    static let address = "D2:4B:7E:10:20:40"

    static let venv = PythonVenv(
        name: "serve", timeout: 300, modules: ["websockets.sync.client"], packages: ["websockets"])

    /// nil when the venv is ready, else why not.
    static func prepareVenv() async -> String? { await venv.prepare() }

    /// A strap sending UINT16 heart rates `first`, `first + 1`, ... every `interval` seconds: each
    /// measurement names the notification it came from (hrm-sim's log has its `hex`).
    static func strap(
        _ address: String = address, name: String = "Serve Strap", interval: Double, count: Int = 2000,
        first: Int = 1, battery: Int? = 77
    ) -> [String: Any] {
        let frames = (first..<(first + count)).map { n in
            "01" + String(format: "%02x%02x", n & 0xFF, n >> 8)
        }
        return [
            "address": address, "name": name, "rssi": -50, "uuids": ["180d", "180f"], "known": true,
            "battery": battery as Any, "mtu": 247,
            "heartRate": ["mode": "frames", "interval": interval, "frames": frames],
        ]
    }

    struct Run {
        let report: [String: Any]
        let sim: [[String: Any]]
        let result: HRMProcess.Result
        /// Why the WebSocket checks cannot run, or nil.
        let noWebSocket: String?

        var status: Int? { report["status"] as? Int }
        var secondsToExit: Double { report["seconds_to_exit"] as? Double ?? .infinity }
        /// hrm serve's stdout lines.
        var stdout: [String] { report["stdout"] as? [String] ?? [] }
        /// hrm serve's stderr lines.
        var stderr: [String] { (report["stderr"] as? [[Any]] ?? []).compactMap { $0.last as? String } }
        var stdoutMeasurements: [String] { stdout.filter { $0.contains(#""type":"measurement""#) } }

        subscript(_ key: String) -> [String: Any] { report[key] as? [String: Any] ?? [:] }

        /// When hrm-sim sent the notification whose heart rate is `bpm` (CLOCK_MONOTONIC, ns).
        var sentAt: [Int: Int] {
            var sent: [Int: Int] = [:]
            for event in sim where event["event"] as? String == "notify" {
                guard let hex = event["hex"] as? String, hex.count == 6, let mono = event["mono_ns"] as? Int,
                    let low = Int(hex.dropFirst(2).prefix(2), radix: 16),
                    let high = Int(hex.suffix(2), radix: 16)
                else { continue }
                sent[low | high << 8] = mono
            }
            return sent
        }

        /// hrm-sim's calls of `member` (Connect, Disconnect, ...).
        func calls(_ member: String) -> [[String: Any]] {
            sim.filter { $0["event"] as? String == "call" && $0["member"] as? String == member }
        }

        var summary: String {
            "status \(String(describing: report["status"])), stderr: \(stderr.joined(separator: " | ")); "
                + "driver: \(result.stderr.suffix(2000))"
        }
    }

    /// A feed client's report: its status, and each line it got with its arrival time.
    struct Client {
        let report: [String: Any]
        init(_ report: Any?) { self.report = report as? [String: Any] ?? [:] }

        var status: Int? { report["status"] as? Int }
        var body: String { report["body"] as? String ?? "" }
        var headers: [String: String] { report["headers"] as? [String: String] ?? [:] }
        var events: [(mono: Int, line: String)] {
            (report["events"] as? [[Any]] ?? []).compactMap { event in
                guard let mono = event.first as? Int, let line = event.last as? String else { return nil }
                return (mono, line)
            }
        }
        var lines: [String] { events.map(\.line) }
        var measurements: [String] { lines.filter { $0.contains(#""type":"measurement""#) } }
        var ended: Int? { report["ended"] as? Int }
    }

    /// Runs `serve_check.py CASE` under hrm-sim playing `devices`; `serve`: hrm serve's arguments.
    static func run(
        _ name: String, devices: [[String: Any]], serve: [String], seconds: Double? = nil
    ) async throws -> Run {
        let why = await prepareVenv()
        let python = why == nil ? venvPython.path : "/usr/bin/python3"
        let directory = try ServeBinaryTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let scenario = directory.appendingPathComponent("scenario.json")
        let log = directory.appendingPathComponent("sim.jsonl")
        let out = directory.appendingPathComponent("report.json")
        try JSONSerialization.data(withJSONObject: ["description": "hrm serve test", "devices": devices])
            .write(to: scenario)
        let sim = HRMProcess.binary.deletingLastPathComponent().appendingPathComponent("hrm-sim")
        var driver = [python, script.path, name, "--hrm", HRMProcess.binary.path, "--out", out.path]
        if let seconds { driver += ["--seconds", String(seconds)] }
        let result = try await HRMProcess.run(
            ["--scenario", scenario.path, "--log", log.path, "--"] + driver + ["--"] + serve, executable: sim)
        let report =
            (try? JSONSerialization.jsonObject(with: Data(contentsOf: out)) as? [String: Any]) ?? [
                "driver_failed": result.stderr
            ]
        let simLog = WatchBinaryTests.lines((try? String(contentsOf: log, encoding: .utf8)) ?? "")
        let websockets = report["websockets"] as? Bool ?? false
        return Run(
            report: report, sim: simLog, result: result,
            noWebSocket: websockets ? nil : (why ?? "Python's websockets cannot be imported"))
    }

    /// Says SKIPPED (and records a known issue: never a silent pass) when the WebSocket checks of
    /// `what` cannot run; true when they can.
    static func webSocketChecks(_ run: Run, _ what: String) -> Bool {
        guard let why = run.noWebSocket else { return true }
        print("SKIPPED: hrm serve WebSocket checks (\(what)) because \(why)")
        withKnownIssue("SKIPPED: \(why)") { Issue.record("WebSocket checks of \(what) not run") }
        return false
    }

    static func object(_ line: String) -> [String: Any] {
        (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]) ?? [:]
    }

    static func bpm(_ line: String) -> Int? { object(line)["bpm"] as? Int }

    /// Latencies (ms) from hrm-sim's send to the client's receipt, per measurement.
    static func latencies(_ client: Client, sentAt: [Int: Int]) -> [Double] {
        client.events.compactMap { event in
            guard event.line.contains(#""type":"measurement""#), let bpm = bpm(event.line),
                let sent = sentAt[bpm]
            else { return nil }
            return Double(event.mono - sent) / 1e6
        }
    }

    static func percentile(_ values: [Double], _ fraction: Double) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return .nan }
        return sorted[min(sorted.count - 1, Int(fraction * Double(sorted.count)))]
    }

    /// True when `values` run up by one each (nothing lost, nothing twice, in order).
    static func consecutive(_ values: [Int]) -> Bool {
        zip(values, values.dropFirst()).allSatisfy { $1 == $0 + 1 }
    }
}
