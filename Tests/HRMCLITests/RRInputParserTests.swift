import HRV
import Testing

@testable import HRMCLI
@testable import Monitor
@testable import Outputs
@testable import SessionLibrary

/// `hrm hrv`'s input, line by line: every form, and every way a line can be wrong.
@Suite struct RRInputParserTests {
    static let measurement =
        #"{"type":"measurement","time":"2026-11-22T10:06:23.968Z","device":"D2:4B:7E:10:20:30","bpm":71,"contact":"detected","energy_kj":null,"rr_1024":[872,849],"rr_ms":[851.5625,829.1015625],"format":"uint8"}"#
    static let csvHeader = "time,device,bpm,contact,energy_kj,rr_1024,rr_ms,format"

    func parse(_ lines: [String]) throws(RRLineError) -> [RRLine] {
        var parser = RRLineParser()
        var read: [RRLine] = []
        for line in lines { read.append(try parser.parse(line)) }
        return read
    }

    func error(_ lines: [String]) -> String? {
        do {
            _ = try parse(lines)
            return nil
        } catch {
            return error.message
        }
    }

    @Test func plainNumbers() throws {
        #expect(
            try parse(["812", "812.5", "  790  ", "0.5", "4999.9"]) == [
                .intervals([812]), .intervals([812.5]), .intervals([790]), .intervals([0.5]),
                .intervals([4999.9]),
            ])
    }

    @Test func blankLinesAndCommentsAreSkipped() throws {
        #expect(
            try parse(["", "   ", "# a comment", "#812", "\r"]) == [
                .skipped, .skipped, .skipped, .skipped, .skipped,
            ])
    }

    @Test func watchJSONMeasurementGivesItsRR() throws {
        #expect(try parse([Self.measurement]) == [.intervals([851.5625, 829.1015625])])
        #expect(try parse([#"{"type":"measurement","bpm":70,"rr_ms":[]}"#]) == [.intervals([])])
    }

    @Test func decodeJSONMeasurementToo() throws {
        let line =
            #"{"type":"measurement","bpm":72,"contact":"detected","energy_kj":null,"rr_1024":[845],"rr_ms":[825.1953125],"format":"uint8","flags":22}"#
        #expect(try parse([line]) == [.intervals([825.1953125])])
    }

    @Test(arguments: [
        #"{"type":"status","time":"2026-11-22T11:33:08.449Z","state":"scanning"}"#,
        #"{"type":"status","time":"t","device":"D2:4B:7E:10:20:30","state":"connected"}"#,
        #"{"type":"status","state":"reconnecting","detail":"next attempt in 0.5 s"}"#,
        #"{"type":"info","name":"Polar H10 7E102030","location":"chest","battery":87,"manufacturer":"Polar Electro Oy","model":"H10"}"#,
        #"{"type":"battery","percent":86}"#,
        #"{"type":"error","code":"malformed_value","message":"not bytes","hex":"0e4801"}"#,
        #"{"type":"hrv","beats":600,"artefacts":0,"mean_nn_ms":953.15,"sdnn_ms":120.85,"rmssd_ms":63.94,"pnn50":44.07,"mean_hr":62.95,"alpha1":0.32}"#,
        #"{"type":"alert","message":"high","rr_ms":[1]}"#,
        #"{"type":"summary","rr_ms":"not even an array"}"#,
        #"{"type":"device","address":"AA:BB:CC:DD:EE:FF","name":null,"rssi":-60,"services":["180d"],"connected":false}"#,
    ])
    func otherJSONTypesAreSkipped(line: String) throws {
        #expect(try parse([line]) == [.skipped])
    }

    @Test func aDisconnectionIsAGap() throws {
        let lines = [
            #"{"type":"status","device":"D2:4B:7E:10:20:30","state":"disconnected","detail":"link lost"}"#,
            #"{"type":"status","state":"stopped","detail":"9 measurements"}"#,
        ]
        #expect(try parse(lines) == [.gap, .gap])
    }

    @Test func csvRowsByHeaderName() throws {
        let lines = [
            Self.csvHeader,
            "2026-11-22T10:06:23.968Z,D2:4B:7E:10:20:30,71,detected,,872 849,851.5625 829.1015625,uint8",
            "2026-11-22T10:06:24.968Z,D2:4B:7E:10:20:30,71,detected,,,,uint8",
        ]
        #expect(try parse(lines) == [.skipped, .intervals([851.5625, 829.1015625]), .intervals([])])
    }

    @Test func csvColumnsAreFoundByNameWhereverTheyAre() throws {
        let lines = [
            "time,device,bpm,contact,energy_kj,rr_1024,rr_ms,format,zone,note",
            "t,d,71,detected,,872,851.5625,uint8,2,",
            "time,rr_ms,device",
            "t,800 810,d",
        ]
        #expect(try parse(lines) == [.skipped, .intervals([851.5625]), .skipped, .intervals([800, 810])])
    }

    @Test func formsMixPerLine() throws {
        let lines = [
            "800", Self.measurement, "# note", Self.csvHeader, "t,d,70,detected,,1,900,uint8", "810",
        ]
        #expect(
            try parse(lines) == [
                .intervals([800]), .intervals([851.5625, 829.1015625]), .skipped, .skipped, .intervals([900]),
                .intervals([810]),
            ])
    }

    @Test func csvProblems() {
        #expect(error(["time,device,bpm"])?.hasPrefix("a CSV header without an rr_ms column") == true)
        #expect(
            error([Self.csvHeader, "t,d,70,detected,,1,900"])?.hasPrefix(
                "a CSV row of 7 fields under a header of 8") == true)
        #expect(
            error([Self.csvHeader, "t,d,70,detected,,1,9x0,uint8"])
                == #"the rr_ms field holds "9x0", not milliseconds"#)
        #expect(
            error(["t,d,70,detected,,1,900,uint8"])?.contains("is not an RR interval") == true,
            "a row without a header")
    }

    @Test(arguments: ["abc", "nan", "inf", "-inf", "0x1p3", "1e3", "8 12", "812ms", "1.2.3", ".", "-"])
    func notANumber(line: String) {
        #expect(error([line])?.contains("is not an RR interval in milliseconds") == true)
    }

    @Test(arguments: ["0", "-5", "-0", "5000", "12345.6", "+99999"])
    func outOfRange(line: String) {
        #expect(error([line])?.contains("out of range: RR intervals are above 0 and below 5000 ms") == true)
    }

    @Test func jsonValuesAreChecked() {
        #expect(
            error([#"{"type":"measurement","rr_ms":[800,-1]}"#])?.contains("-1 ms is out of range") == true)
        #expect(error([#"{"type":"measurement","rr_ms":[0]}"#])?.contains("0 ms is out of range") == true)
        #expect(
            error([#"{"type":"measurement","rr_ms":[6000]}"#])?.contains("6000 ms is out of range") == true)
        #expect(
            error([#"{"type":"measurement","rr_ms":[1e400]}"#])?.contains("out of range at column 32") == true
        )
        #expect(error([#"{"type":"measurement","rr_ms":[null]}"#])?.contains("other than numbers") == true)
        #expect(error([#"{"type":"measurement","rr_ms":["800"]}"#])?.contains("other than numbers") == true)
        #expect(error([#"{"type":"measurement","bpm":70}"#])?.contains(#"without an "rr_ms" array"#) == true)
        #expect(error([#"{"bpm":70}"#])?.contains(#"an object with a "type""#) == true)
        #expect(error([#"{"type":7}"#])?.contains(#"an object with a "type""#) == true)
    }

    @Test(arguments: [
        #"{"type":"measurement","bpm":71,"rr_ms":[851.5"#,
        #"{"type":"measurement","bpm":71,"rr_ms":[851.5625,829.1015625],"format":"uin"#,
        #"{"type":"measurement""#,
        #"{"type":"measurement","rr_ms":[800]}}"#,
        #"{"type":"measurement","rr_ms":[800,]}"#,
        #"{"type":"measurement","rr_ms":[08]}"#,
        #"{"type":"measurement","rr_ms":[NaN]}"#,
        #"{"type":"measurement",'rr_ms':[800]}"#,
        #"{"type":"measurement","rr_ms":[800],"rr_ms":[900]}"#,
        "{",
    ])
    func tornOrInvalidJSON(line: String) {
        #expect(error([line])?.hasPrefix("not valid JSON") == true)
    }

    @Test func theErrorNamesTheSourceAndLine() {
        let text = "800\n810\n\n" + #"{"type":"measurement","rr_ms":[820,8"# + "\n830\n"
        #expect(throws: RRInputError.self) { try RRInput.runs(in: text, source: "a.jsonl") }
        do {
            _ = try RRInput.runs(in: text, source: "a.jsonl")
        } catch {
            #expect(error.source == "a.jsonl")
            #expect(error.line == 4)
            #expect(
                error.description.hasPrefix("a.jsonl, line 4: not valid JSON (the line ends inside an array"))
        }
    }

    @Test func gapsSplitRuns() throws {
        let text = [
            "800", Self.measurement, #"{"type":"status","state":"disconnected"}"#,
            #"{"type":"status","state":"reconnecting"}"#, #"{"type":"status","state":"disconnected"}"#, "900",
            "910",
        ].joined(separator: "\n")
        #expect(try RRInput.runs(in: text, source: "x") == [[800, 851.5625, 829.1015625], [900, 910]])
        #expect(try RRInput.runs(in: "# nothing\n\n", source: "x") == [])
        #expect(try RRInput.runs(in: "800\r\n810\r\n", source: "x") == [[800, 810]], "CRLF line ends")
    }

    @Test func longLinesAreCutInMessages() {
        let message = error([String(repeating: "x", count: 10_000)])
        #expect((message?.count ?? .max) < 200)
        #expect(error(["a\u{1b}[2Jb"])?.contains("\\e[2J") == true, "control characters escaped")
    }
}

@Suite struct RRInputJSONTests {
    @Test func readsTheSubsetStrictly() throws {
        let value = try JSONValue.parse(#" {"a":[1,-2.5e2,true,false,null,"x\"\u00e9\ud83d\ude00"],"b":{}} "#)
        #expect(
            value
                == .object([
                    (
                        "a",
                        .array([
                            .number(1), .number(-250), .bool(true), .bool(false), .null, .string("x\"é😀"),
                        ])
                    ), ("b", .object([])),
                ]))
    }

    @Test func deepNestingIsRefusedNotACrash() {
        #expect(throws: JSONValue.SyntaxError.self) {
            try JSONValue.parse(String(repeating: "[", count: 100_000))
        }
    }

    @Test(arguments: [
        "", "tru", "01", "1.", "-", "1e", "\"a", "\"\u{1}\"", "[1 2]", "{\"a\" 1}", "\"\\x\"", "1 2",
    ])
    func refused(text: String) {
        #expect(throws: JSONValue.SyntaxError.self) { try JSONValue.parse(text) }
    }
}

@Suite struct RRInputWindowTests {
    static func beats(_ values: [Double]) -> [NNInterval] {
        values.enumerated().map { NNInterval(milliseconds: $1, differenceUsable: $0 > 0) }
    }

    @Test func windowsTakeTheBeatsThatEndInsideThem() {
        // Ends at 1, 2, ..., 10 s.
        let beats = Self.beats(Array(repeating: 1000, count: 10))
        let spans = HRVWindows.windows(beats, window: 4, step: 4)
        #expect(spans.map(\.start) == [0, 4])
        #expect(spans.map(\.end) == [4, 8])
        #expect(spans.map(\.metrics.beats) == [4, 4], "(0, 4] holds the beats ending at 1-4 s")
        let sliding = HRVWindows.windows(beats, window: 4, step: 3)
        #expect(sliding.map(\.start) == [0, 3, 6])
        #expect(sliding.map(\.metrics.beats) == [4, 4, 4])
        #expect(
            HRVWindows.windows(beats, window: 10, step: 10).map(\.metrics.beats) == [10],
            "complete at the end")
        #expect(HRVWindows.windows(beats, window: 11, step: 1).isEmpty, "no complete window")
    }

    @Test func sumsOfDoublesDoNotLoseTheLastBeat() {
        let beats = Self.beats(Array(repeating: 100.1, count: 1000))  // 100.1 s in all
        let spans = HRVWindows.windows(beats, window: 10.01, step: 10.01)
        #expect(spans.count == 10)
        #expect(spans.allSatisfy { $0.metrics.beats == 100 })
    }

    @Test func times() {
        #expect(HRVText.time(0) == "0:00")
        #expect(HRVText.time(90) == "1:30")
        #expect(HRVText.time(3723) == "1:02:03")
        #expect(HRVText.time(2.5) == "0:02.5")
        #expect(HRVText.time(2.433) == "0:02.433")
        #expect(HRVText.number(812) == "812")
        #expect(HRVText.number(-0.5) == "-0.5")
    }
}
