import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// The change history: the current token, changes since one, and the live event stream.
extension NativeAPI {
    /// The routes of this group.
    var historyRoutes: [Route] {
        [
            Route("GET", "/api/token") { _ in try .json(TokenDocument(token: try await library.currentToken())) },
            Route("GET", "/api/changes", query: ["since", "summary", "playlist", "limit"], changes),
            Route("GET", "/api/events", query: ["since"], events),
        ]
    }

    func changes(_ request: RouteRequest) async throws -> HTTPResponse {
        guard let since = request.query("since") else { throw HTTPError.badRequest("changes needs since, a token from /api/token", code: "missingParameter") }
        let scope = try request.http.queryValues("playlist").map { text throws(WireInputError) in PlaylistID(try Parameters.id(text, what: "playlist")) }
        let summary = try request.bool("summary") ?? false
        let limit = try request.int("limit", in: 1...1_000_000)
        if summary && limit != nil { throw HTTPError.badRequest("summary and limit cannot be combined", code: "invalidValue") }
        return try .json(
            try await Documents.changes(
                since: try Library.token(since), summary: summary, scope: scope.isEmpty ? nil : Set(scope), limit: limit,
                viewer: try request.signedIn.id, library))
    }

    func events(_ request: RouteRequest) async throws -> HTTPResponse {
        let resume = request.http.headers["last-event-id"] ?? request.query("since")
        let since = try resume.map { try Library.token($0) }
        let stream = try await context.events.subscribe(since: since, viewer: try request.signedIn.id)
        return HTTPResponse(
            status: 200,
            headers: [("Content-Type", "text/event-stream; charset=utf-8"), ("Cache-Control", "no-store"), ("X-Accel-Buffering", "no")],
            body: .stream(stream))
    }
}
