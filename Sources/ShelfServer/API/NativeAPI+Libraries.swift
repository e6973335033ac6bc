import Foundation
import Shelf
import ShelfCore
import ShelfWire

/// Libraries and folders: the libraries a user sees (for the page's switcher; admins get each
/// one's roots, tracks, albums and size), and the folders of their roots as they are on disk.
extension NativeAPI {
    /// The routes of this group.
    var libraryRoutes: [Route] {
        [
            Route("GET", "/api/libraries") { request in
                let user = try request.signedIn
                if user.isAdmin { return try .json(["libraries": try await library.librarySummaries()]) }
                let scope = try await library.scope(for: user)
                let visible = try await library.libraries().filter { scope.sees(library: $0.id) }
                return try .json(["libraries": visible.map { LibraryName(id: $0.id, name: $0.name) }])
            },
            Route("GET", "/api/folders") { _ in
                try .json(FoldersDocument(folders: try await library.rootFolders().map(FolderEntry.init)))
            },
            Route("GET", "/api/folders/{id}") { request in
                let id = FolderID(rawValue: try request.id("id", what: "folder"))
                guard let contents = try await library.folder(id) else { throw LibraryError.objectNotFound(kind: "folder", id: String(id.rawValue)) }
                return try .json(try await Documents.folder(contents, library))
            },
        ]
    }

    /// A library as a user who is not an admin sees it: its ID and name.
    struct LibraryName: Encodable {
        let id: Int
        let name: String
    }
}
