import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Whole-library jobs (admins): imports and exports.
extension NativeAPI {
    /// The routes of this group.
    var jobRoutes: [Route] {
        [
            Route("POST", "/api/import", access: .admin, startImport),
            Route("GET", "/api/import", access: .admin) { _ in try .json(context.imports.status) },
            Route("POST", "/api/export", access: .admin, export),
        ]
    }

    /// `{"paths":[…]}` imports those; `{"scan":true}` scans the configured music folders.
    struct ImportBody: Decodable {
        let paths: [String]?
        let scan: Bool?
    }

    func startImport(_ request: RouteRequest) async throws -> HTTPResponse {
        let body = try request.json(ImportBody.self)
        if body.scan == true {
            guard body.paths == nil else { throw HTTPError.badRequest("give paths or scan, not both", code: "invalidValue") }
            guard let status = context.scans.scanNow(reason: "the web page") else {
                throw HTTPError.badRequest("no music folders are configured to scan (music in the config, or --music)", code: "invalidValue")
            }
            return try .json(status, status: 202)
        }
        let paths = body.paths ?? []
        guard !paths.isEmpty else { throw HTTPError.badRequest("import needs paths (or scan: true)", code: "invalidValue") }
        for path in paths where !path.hasPrefix("/") || !FileManager.default.fileExists(atPath: path) {
            throw HTTPError.badRequest("'\(path)' is not an absolute path that exists on the server", code: "invalidValue")
        }
        let status = try context.imports.start(paths.map { URL(fileURLWithPath: $0) })
        return try .json(status, status: 202)
    }

    struct ExportBody: Decodable {
        let ids: [Int64]?
        let filter: String?
        let to: String
        let format: String?
        let bitrate: Int?
    }

    func export(_ request: RouteRequest) async throws -> HTTPResponse {
        let body = try request.json(ExportBody.self)
        guard (body.ids?.isEmpty ?? true) != (body.filter == nil) else {
            throw HTTPError.badRequest("export needs ids or filter (one of them)", code: "invalidValue")
        }
        guard body.to.hasPrefix("/") else { throw HTTPError.badRequest("to must be an absolute directory on the server", code: "invalidValue") }
        guard let format = ExportFormat(rawValue: body.format ?? "copy") else {
            throw HTTPError.badRequest("format expects \(ExportFormat.allCases.map(\.rawValue).joined(separator: ", "))", code: "invalidValue")
        }
        var ids = (body.ids ?? []).map { TrackID($0) }
        if let filter = body.filter { ids = try await library.snapshot(LibraryQuery(sort: .albumArtist, filter: try Parameters.filter(filter))) }
        let result = try await library.export(ids, to: URL(fileURLWithPath: body.to), options: ExportOptions(format: format, bitrate: body.bitrate))
        context.events.poke()
        return try .json(ExportDocument(result))
    }
}
