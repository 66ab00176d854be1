import Monitor
import SessionLibrary

/// `GET /trends` of `hrm serve`: the session library's index brought up to date as `hrm trends`
/// does, and its figures as a page of SVG charts (`TrendsSVG`). Blocking (files, SQLite): the
/// server calls it on a thread of its own.
public enum TrendsPage {
    /// What the server sends back.
    public struct Response: Sendable {
        /// The HTTP status.
        public var status: Int
        /// The page, or a line of text for a bad request.
        public var body: String
        /// Whether `body` is HTML (else plain text).
        public var isHTML: Bool
    }

    /// The page for the query's `days` (1 to 36600, 30 by default), `by` (`day` or `week`) and
    /// `device`, with `today` the day (since 1970-01-01, UTC) that ends the period; what the
    /// library says on the side (indexing, a file left out) goes to `log`.
    public static func response(
        days: String?, by: String?, device: String?, today: Int, log: @escaping (String) -> Void
    ) -> Response {
        var span = 30
        if let days {
            guard let value = Int(days), (1...36_600).contains(value) else {
                return Response(
                    status: 400, body: "hrm serve: /trends?days= takes a number of days, 1 to 36600\n",
                    isHTML: false)
            }
            span = value
        }
        let grouping: Trends.Grouping
        switch by {
        case nil, "day": grouping = .day
        case "week": grouping = .week
        default:
            return Response(status: 400, body: "hrm serve: /trends?by= takes day or week\n", isHTML: false)
        }
        let wanted = device.flatMap { $0.isEmpty ? nil : $0 }
        guard let folder = SessionsFolder.fromEnvironment() else {
            return Response(
                status: 200,
                body: TrendsSVG.message("neither XDG_DATA_HOME nor HOME is set: no session library"),
                isHTML: true)
        }
        let found: [LibraryEntry]?
        do throws(SessionsFolder.Unreadable) {
            found = try SessionLibraryIndex.entries(
                of: folder, reporter: SessionLibraryIndex.Reporter(say: { log("trends: " + $0) }))
        } catch {
            return Response(status: 500, body: TrendsSVG.message("\(error)"), isHTML: true)
        }
        switch TrendsReport.make(
            found ?? [], folder: folder.path, days: span, today: today, by: grouping, device: wanted,
            say: { log("trends: " + $0) })
        {
        case .report(let report):
            return Response(status: 200, body: TrendsSVG.page(report), isHTML: true)
        case .nothing(let message):
            return Response(status: 200, body: TrendsSVG.message(message), isHTML: true)
        case .unknownDevice(let message):
            return Response(status: 404, body: TrendsSVG.message(message), isHTML: true)
        }
    }

    /// Today, as `hrm trends` counts its days.
    public static var today: Int { Trends.day(ofMilliseconds: Timestamp.now().millisecondsSinceEpoch) }
}
