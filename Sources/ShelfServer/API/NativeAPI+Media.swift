import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Media: pictures at served sizes, and streams (files and transcodes).
extension NativeAPI {
    /// The routes of this group.
    var mediaRoutes: [Route] {
        [
            Route("GET", "/api/artwork/{artworkID}", query: ["size", "format"]) { request in
                guard let uuid = UUID(uuidString: request.parameters["artworkID"] ?? "") else {
                    throw HTTPError.badRequest("'\(request.parameters["artworkID"] ?? "")' is not an artwork ID", code: "invalidValue")
                }
                // A picture only another library's tracks show is none, as one that does not exist.
                guard try await library.artworkVisible(ArtworkID(uuid)) else { throw LibraryError.artworkNotFound(ArtworkID(uuid)) }
                return try await context.artwork.respond(
                    ArtworkID(uuid), size: try request.int("size", in: 1...100_000) ?? 300, format: try Self.imageFormat(request),
                    ifNoneMatch: request.http.headers["if-none-match"], cacheControl: "public, max-age=31536000, immutable")
            },
            Route("GET", "/api/tracks/{id}/artwork", query: ["size", "format"]) { request in
                let id = TrackID(try request.id("id", what: "track"))
                guard let track = try await library.track(id) else { throw LibraryError.trackNotFound(id) }
                guard let artworkID = track.artworkID else { throw HTTPError.notFound("track \(id) has no picture") }
                return try await context.artwork.respond(
                    artworkID, size: try request.int("size", in: 1...100_000) ?? 300, format: try Self.imageFormat(request),
                    ifNoneMatch: request.http.headers["if-none-match"], cacheControl: "private, max-age=60")
            },
            Route("GET", "/api/stream/{id}", query: ["format", "bitRate", "timeOffset"], stream),
        ]
    }

    static func imageFormat(_ request: RouteRequest) throws(HTTPError) -> ArtworkResponder.Format {
        guard let text = request.query("format") else { return .jpeg }
        guard let format = ArtworkResponder.Format(rawValue: text) else {
            throw HTTPError.badRequest("format expects jpeg or png, got '\(text)'", code: "invalidValue")
        }
        return format
    }

    func stream(_ request: RouteRequest) async throws -> HTTPResponse {
        // The stream role is the user's whichever API asks.
        guard try request.signedIn.may(.stream) else { throw HTTPError.forbidden("this user may not stream") }
        let id = TrackID(try request.id("id", what: "track"))
        guard let formatText = request.query("format"), formatText != "raw" else {
            if request.query("bitRate") != nil || request.query("timeOffset") != nil {
                throw HTTPError.badRequest("bitRate and timeOffset need format (opus, mp3, aac or flac)", code: "invalidValue")
            }
            return try await context.streams.file(id, request: request.http)
        }
        // A preset of the config file (`format=mobile`) names a format and its bit rate.
        let preset = context.streams.presets[formatText]
        guard let format = preset?.format ?? StreamResponder.TranscodeFormat(rawValue: formatText) else {
            let names = (["raw"] + StreamResponder.TranscodeFormat.allCases.map(\.rawValue) + context.streams.presets.keys.sorted()).joined(separator: ", ")
            throw HTTPError.badRequest("format expects one of \(names), got '\(formatText)'", code: "invalidValue")
        }
        let bitRate = try request.int("bitRate", in: 32...320) ?? preset?.bitRate ?? 128
        let offset: Double
        if let text = request.query("timeOffset") {
            guard let value = Double(text), value >= 0, value < 86_400 else {
                throw HTTPError.badRequest("timeOffset expects seconds from 0, got '\(text)'", code: "invalidValue")
            }
            offset = value
        } else {
            offset = 0
        }
        return try await context.streams.transcode(id, format: format, bitRate: bitRate, timeOffset: offset)
    }
}
