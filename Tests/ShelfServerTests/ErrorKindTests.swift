import Foundation
import Shelf
import ShelfCore
import Testing

@testable import ShelfServer

/// One classification of the engine's errors, answered the same way by every front end.
@Suite struct ErrorKindTests {
    /// An engine error of each kind.
    static let samples: [(any ClassifiedError, ErrorKind)] = [
        (LibraryError.trackNotFound(TrackID(7)), .notFound),
        (LibraryError.objectNotFound(kind: "share", id: "x"), .notFound),
        (LibraryError.userExists("ann"), .conflict),
        (LibraryError.duplicatePath("/m/a.flac"), .conflict),
        (LibraryError.invalidValue(field: "year", value: "x", reason: "not a number"), .invalid),
        (LibraryError.tokenExpired(token: "t", reason: "old"), .expired),
        (LibraryError.detailsUnavailable(token: "t"), .expired),
        (LibraryError.busy(path: "/l/library.sqlite", waitedMilliseconds: 5000), .busy),
        (LibraryError.diskFull(path: "/l/library.sqlite"), .full),
        (LibraryError.storeDamaged(path: "/l/library.sqlite", reason: "malformed"), .damaged),
        (LibraryError.newerSchema(path: "/l/library.sqlite", found: 99, supported: 10), .unavailable),
        (LibraryError.database(path: "/l", code: 1, extendedCode: 1, message: "m", sql: "SELECT secret"), .internal),
        (ToolError(tool: "ffmpeg", reason: .notInstalled(searched: "/x", package: "ffmpeg")), .unavailable),
        (ImageError.unknownFormat, .invalid),
        (TagError.writeFailed(path: "/m/a.flac", reason: "read-only"), .internal),
    ]

    @Test func eachErrorHasItsKind() {
        for (error, kind) in Self.samples { #expect(error.kind == kind, "\(error)") }
    }

    /// The HTTP status of every kind; a full disk is a 507 whatever the route, a damaged store a
    /// 503 whose message carries the way to restore; internal details never reach the answer.
    @Test func httpStatusByKind() {
        let reported = Locked([String]())
        func answer(_ error: any ClassifiedError) -> HTTPError {
            Router.httpError(for: error, report: { line in reported.withLock { $0.append(line) } })
        }
        let expected: [ErrorKind: Int] = [
            .notFound: 404, .conflict: 409, .invalid: 400, .forbidden: 403, .expired: 410, .busy: 503, .full: 507, .damaged: 503,
            .unavailable: 503, .internal: 500,
        ]
        for (error, kind) in Self.samples { #expect(answer(error).status == expected[kind], "\(error)") }
        #expect(answer(LibraryError.diskFull(path: "/l/library.sqlite")).code == "diskFull")
        let damaged = answer(LibraryError.storeDamaged(path: "/l/library.sqlite", reason: "malformed"))
        #expect(damaged.message.contains("restore BACKUP --force"), "\(damaged.message)")
        let hidden = answer(LibraryError.database(path: "/l", code: 1, extendedCode: 1, message: "m", sql: "SELECT secret"))
        #expect(hidden.code == "internal" && !hidden.message.contains("secret"))
        #expect(reported.withLock { $0.contains { $0.contains("SELECT secret") } })
        #expect(answer(LibraryError.busy(path: "/l", waitedMilliseconds: 1)).headers.contains { $0.0 == "Retry-After" })
    }

    /// The Subsonic code of every kind: 70 for not found, 50 for forbidden, 0 otherwise, with the
    /// reason where it is the user's and a generic message (and the log) where it is Shelf's.
    @Test func subsonicCodeByKind() {
        for (error, kind) in Self.samples {
            var logged = false
            let failure = SubsonicAPI.subsonicError(for: error) { _ in logged = true }
            switch kind {
            case .notFound: #expect(failure.code == 70)
            case .forbidden: #expect(failure.code == 50)
            case .invalid, .conflict, .expired, .full, .damaged: #expect(failure.code == 0 && failure.message == error.description)
            case .busy: #expect(failure.code == 0 && !logged)
            case .unavailable, .internal: #expect(failure.code == 0 && logged && failure.message != error.description)
            }
        }
    }
}
