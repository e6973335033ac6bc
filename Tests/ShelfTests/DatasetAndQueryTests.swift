import Foundation
import ShelfCore
import ShelfTestSupport
import Testing

@testable import Shelf

@Suite struct DatasetAndQueryTests {
    @Test func generatorIsDeterministicAndCoversTheTrickyCases() {
        let a = DatasetGenerator(tracks: 3_000, seed: 7).allTracks()
        let b = DatasetGenerator(tracks: 3_000, seed: 7).allTracks()
        let c = DatasetGenerator(tracks: 3_000, seed: 8).allTracks()
        #expect(a.count == 3_000)
        #expect(a == b)
        #expect(a != c)
        #expect(Set(a.map(\.path)).count == a.count)
        let withSortTag = a.filter { !SortKey.isBlank($0.sortArtist) || !SortKey.isBlank($0.sortTitle) || !SortKey.isBlank($0.sortAlbum) }
        #expect(withSortTag.count > 300)  // roughly a fifth carry a sort tag
        #expect(a.contains { $0.sortArtist != nil && SortKey.isBlank($0.sortArtist) && $0.sortArtist != "" })
        #expect(a.contains { $0.artist?.hasPrefix("The ") == true && $0.sortArtist?.hasSuffix(", The") == true })
        #expect(a.contains { $0.artist?.unicodeScalars.contains { (0x4E00...0x9FFF).contains($0.value) } == true && $0.sortArtist != nil })
        #expect(a.contains { $0.artist?.unicodeScalars.contains { (0xAC00...0xD7A3).contains($0.value) } == true })
        #expect(a.contains { $0.artist?.unicodeScalars.contains { (0x0400...0x04FF).contains($0.value) } == true })
        #expect(a.contains { $0.compilation && $0.albumArtist == "Various Artists" })
        #expect(a.contains { ($0.artist ?? "").contains("é") || ($0.artist ?? "").contains("ö") })
        #expect(a.allSatisfy { (8...16).contains($0.trackCount ?? 0) || ($0.discCount ?? 1) > 1 || $0.id == .unassigned })
    }

    @Test func directPageIsSortedTotallyAndDescendingIsItsReverse() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        _ = try await DatasetGenerator(tracks: 600, seed: 3).fill(library, chunkSize: 200)
        for field in [SortField.artist, .title, .year, .dateAdded, .rating] {
            let ascending = try await library.page(LibraryQuery(sort: field), offset: 0, limit: 1_000)
            let descending = try await library.page(LibraryQuery(sort: field, descending: true), offset: 0, limit: 1_000)
            #expect(ascending.total == 600)
            #expect(ascending.items.map(\.id) == descending.items.map(\.id).reversed())
            let query = LibraryQuery(sort: field)
            for (x, y) in zip(ascending.items, ascending.items.dropFirst()) {
                #expect(SortKey.precedes((SortKey.components(of: x, for: query), x.id), (SortKey.components(of: y, for: query), y.id)))
            }
            let offsetPage = try await library.page(LibraryQuery(sort: field), offset: 590, limit: 50)
            #expect(offsetPage.items.map(\.id) == Array(ascending.items.suffix(10).map(\.id)))
        }
    }

    @Test func sortTagsDecideTheArtistOrderWhenOn() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        try await library.write { batch in
            var zeppelin = sampleTrack(1, artist: "Led Zeppelin")
            zeppelin.sortArtist = "Zeppelin, Led"
            try batch.insert(zeppelin)
            try batch.insert(sampleTrack(2, artist: "Cream"))
            try batch.insert(sampleTrack(4, artist: "Moby"))
            var blank = sampleTrack(3, artist: "Abba")
            blank.sortArtist = "\u{3000}"
            try batch.insert(blank)
        }
        let on = try await library.page(LibraryQuery(sort: .artist, useSortTags: true)).items.compactMap(\.artist)
        let off = try await library.page(LibraryQuery(sort: .artist, useSortTags: false)).items.compactMap(\.artist)
        #expect(on == ["Abba", "Cream", "Moby", "Led Zeppelin"])
        #expect(off == ["Abba", "Cream", "Led Zeppelin", "Moby"])
    }

    @Test func lookupByIDsListsMissingOnes() async throws {
        let dir = try TemporaryDirectory()
        let library = Library(directory: dir.url)
        let id = try await library.write { try $0.insert(sampleTrack(1)) }
        let lookup = try await library.tracks(ids: [TrackID(999), id])
        #expect(lookup.tracks.map(\.id) == [id])
        #expect(lookup.missing == [TrackID(999)])
    }
}
