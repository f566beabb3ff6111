// The demo municipality's programme (D1 `demo`): fixed, deterministic content for the fictional
// "Musterstadt". Dates are Berlin wall-clock times in the summer holidays of 2027 (5 July to 14 August);
// seed.ts turns them into timestamps with the right offset and creates everything through the services.

export const CATEGORIES = {
  sport: 'Sport & Bewegung',
  kreativ: 'Kreativ & Basteln',
  natur: 'Natur & Umwelt',
  technik: 'Technik & Forschen',
  musik: 'Musik & Theater',
  ausflug: 'Ausflüge',
  kochen: 'Kochen & Backen',
  spiel: 'Spiel & Spaß',
} as const;
export type CategoryKey = keyof typeof CATEGORIES;

export type DemoOrganiser = {
  name: string; email: string; phone: string; website?: string; street: string; description: string; contact: string;
};

const ZIP = '12345';
export const CITY = 'Musterstadt';
export { ZIP };

export const ORGANISERS: DemoOrganiser[] = [
  { name: 'Jugendzentrum Musterstadt', email: 'juz@musterstadt.example', phone: '012345 100-20', website: 'https://juz.musterstadt.example', street: 'Lindenstraße 12', contact: 'Jana Krüger, 012345 100-21', description: 'Offener Treff für Kinder und Jugendliche mit Werkstatt, Bühne und Garten.' },
  { name: 'TSV Musterstadt 1889 e. V.', email: 'jugend@tsv-musterstadt.example', phone: '012345 4711', website: 'https://tsv-musterstadt.example', street: 'Schulweg 3', contact: 'Mehmet Aydın, 0170 1234567', description: 'Der größte Sportverein der Stadt: Fußball, Turnen, Judo, Tischtennis und vieles mehr.' },
  { name: 'Stadtbibliothek Musterstadt', email: 'bibliothek@musterstadt.example', phone: '012345 100-40', website: 'https://bibliothek.musterstadt.example', street: 'Marktplatz 1', contact: 'Sabine Lorenz, 012345 100-41', description: 'Bücher, Spiele, Medien und ein Makerspace-Regal für alle Altersgruppen.' },
  { name: 'Naturschutzjugend Musterstadt', email: 'info@naju-musterstadt.example', phone: '012345 8080', street: 'Waldweg 7', contact: 'Tobias Brandt, 0151 2345678', description: 'Kinder- und Jugendgruppe für Natur- und Umweltschutz rund um Stadtwald und Mustersee.' },
  { name: 'Musikschule Musterstadt', email: 'info@musikschule-musterstadt.example', phone: '012345 6060', website: 'https://musikschule-musterstadt.example', street: 'Kantstraße 8', contact: 'Elena Petrova, 012345 6061', description: 'Städtische Musikschule mit Instrumentalunterricht, Bands, Chören und Theaterkursen.' },
  { name: 'Freiwillige Feuerwehr Musterstadt', email: 'jugendfeuerwehr@musterstadt.example', phone: '012345 112-0', street: 'Feuerwehrstraße 2', contact: 'Kai Schröder, 0160 3456789', description: 'Die Jugendfeuerwehr zeigt, wie Brandschutz und Erste Hilfe funktionieren.' },
  { name: 'Kunstwerkstatt Farbklecks', email: 'hallo@farbklecks.example', phone: '012345 3344', website: 'https://farbklecks.example', street: 'Mühlenweg 5', contact: 'Lea Hoffmann, 012345 3345', description: 'Atelier für Malerei, Keramik und Textilkunst mit Kursen für Kinder.' },
  { name: 'Reitverein Lindenhof e. V.', email: 'kontakt@reitverein-lindenhof.example', phone: '012345 9191', street: 'Lindenhof 1', contact: 'Anke Vogel, 0172 4567890', description: 'Reitschule mit Schulponys, Reithalle und großem Außengelände.' },
  { name: 'Makerspace Musterstadt e. V.', email: 'team@makerspace-musterstadt.example', phone: '012345 2021', website: 'https://makerspace-musterstadt.example', street: 'Bahnhofstraße 21', contact: 'Jonas Weber, 0176 5678901', description: 'Offene Werkstatt mit 3D-Druckern, Lasercutter, Elektronik und Holzwerkstatt.' },
  { name: 'Landfrauenverein Musterstadt', email: 'landfrauen@musterstadt.example', phone: '012345 5566', street: 'Am Backhaus 4', contact: 'Gisela Neumann, 012345 5567', description: 'Kochen, Backen und Einmachen nach alten und neuen Rezepten.' },
];

export type DemoPlace = { point: string; address: string; lat: number; lng: number; wheelchair: boolean };

export const PLACES: DemoPlace[] = [
  { point: 'Jugendzentrum, Eingang Gartenseite', address: 'Lindenstraße 12, 12345 Musterstadt', lat: 51.3127, lng: 9.4797, wheelchair: true },
  { point: 'Sporthalle am Schulzentrum', address: 'Schulweg 3, 12345 Musterstadt', lat: 51.3181, lng: 9.4712, wheelchair: true },
  { point: 'Stadtbibliothek, Kinderbereich im 1. OG', address: 'Marktplatz 1, 12345 Musterstadt', lat: 51.3149, lng: 9.4903, wheelchair: true },
  { point: 'Parkplatz am Stadtwald', address: 'Waldweg 7, 12345 Musterstadt', lat: 51.3262, lng: 9.4625, wheelchair: false },
  { point: 'Musikschule, Raum 4', address: 'Kantstraße 8, 12345 Musterstadt', lat: 51.3110, lng: 9.4951, wheelchair: false },
  { point: 'Feuerwache Musterstadt', address: 'Feuerwehrstraße 2, 12345 Musterstadt', lat: 51.3090, lng: 9.4838, wheelchair: true },
  { point: 'Kunstwerkstatt Farbklecks', address: 'Mühlenweg 5, 12345 Musterstadt', lat: 51.3172, lng: 9.5012, wheelchair: false },
  { point: 'Reithof Lindenhof, Stallgasse', address: 'Lindenhof 1, 12345 Musterstadt', lat: 51.3341, lng: 9.4551, wheelchair: false },
  { point: 'Makerspace, Hinterhof', address: 'Bahnhofstraße 21, 12345 Musterstadt', lat: 51.3137, lng: 9.4868, wheelchair: true },
  { point: 'Lehrküche der Gesamtschule', address: 'Schulweg 5, 12345 Musterstadt', lat: 51.3185, lng: 9.4701, wheelchair: true },
  { point: 'Freibad Musterstadt, Kasse', address: 'Badstraße 40, 12345 Musterstadt', lat: 51.3049, lng: 9.4765, wheelchair: true },
  { point: 'Bahnhof Musterstadt, Haupteingang', address: 'Bahnhofsvorplatz 1, 12345 Musterstadt', lat: 51.3131, lng: 9.4849, wheelchair: true },
  { point: 'Rathaus, Treppe am Marktplatz', address: 'Marktplatz 2, 12345 Musterstadt', lat: 51.3152, lng: 9.4911, wheelchair: true },
  { point: 'Grillplatz am Mustersee', address: 'Seestraße 30, 12345 Musterstadt', lat: 51.3298, lng: 9.5103, wheelchair: false },
  { point: 'Brücke am Mühlenbach', address: 'Mühlenweg 40, 12345 Musterstadt', lat: 51.3201, lng: 9.5066, wheelchair: false },
  { point: 'Backhaus am Heimatmuseum', address: 'Am Backhaus 4, 12345 Musterstadt', lat: 51.3163, lng: 9.4930, wheelchair: true },
  { point: 'Sternwarte auf dem Galgenberg', address: 'Galgenberg 1, 12345 Musterstadt', lat: 51.3030, lng: 9.5201, wheelchair: false },
  { point: 'Stadtpark, Eingang Parkstraße', address: 'Parkstraße 1, 12345 Musterstadt', lat: 51.3120, lng: 9.4990, wheelchair: true },
];

/** Berlin wall-clock dates: `YYYY-MM-DD`, times `HH:MM`. */
export type DemoWhen =
  | { kind: 'once'; day: string; from: string; to: string }
  | { kind: 'camp'; day: string; from: string; lastDay: string; to: string }
  | { kind: 'days'; days: string[]; from: string; to: string }
  | { kind: 'weekly'; day: string; from: string; to: string; rule: string };

const once = (day: string, from: string, to: string): DemoWhen => ({ kind: 'once', day, from, to });
const camp = (day: string, from: string, lastDay: string, to: string): DemoWhen => ({ kind: 'camp', day, from, lastDay, to });
const days = (first: string, count: number, from: string, to: string): DemoWhen => {
  const start = new Date(`${first}T12:00:00Z`);
  return { kind: 'days', days: Array.from({ length: count }, (_, i) => new Date(start.getTime() + i * 86_400_000).toISOString().slice(0, 10)), from, to };
};
const weekly = (day: string, from: string, to: string, rule: string): DemoWhen => ({ kind: 'weekly', day, from, to, rule });

/** Where an offer ends up: published (default), or left in another place, or published only by link, or called off. */
export type DemoState = 'published' | 'draft' | 'completed' | 'reviewed' | 'private_link' | 'cancelled';

export type DemoOffer = {
  name: string;
  teaser: string;
  about: string;
  highlights: string[];
  categories: CategoryKey[];
  /** Indexes into ORGANISERS. */
  hosts: number[];
  /** Index into PLACES. */
  place: number;
  when: DemoWhen;
  fee: number;
  ages: [number, number];
  /** Omitted: unlimited places. */
  max?: number;
  min?: number;
  bring?: string;
  state?: DemoState;
  /** Number of images (default 1). */
  images?: number;
  /** No application needed: just come along. */
  open?: boolean;
  question?: string;
  /** A `file` question (issue 21: an answer file families upload), not required. */
  fileQuestion?: string;
  comment?: string;
};

export const OFFERS: DemoOffer[] = [
  { name: 'Fußball-Feriencamp', teaser: 'Drei Tage kicken wie die Profis', about: 'Dribbeln, passen, Tore schießen: Trainerinnen und Trainer des TSV zeigen euch Tricks aus dem Vereinstraining. Zum Abschluss gibt es ein kleines Turnier mit Siegerehrung.', highlights: ['Techniktraining in kleinen Gruppen', 'Torwarttraining für alle, die wollen', 'Abschlussturnier mit Urkunden'], categories: ['sport'], hosts: [1], place: 1, when: days('2027-07-05', 3, '09:00', '15:00'), fee: 4500, ages: [7, 12], max: 24, min: 10, images: 2 },
  { name: 'Schwimmkurs im Freibad', teaser: 'In vier Wochen zum Seepferdchen oder Bronze', about: 'Einmal pro Woche übt ihr mit ausgebildeten Schwimmlehrern im Lehrschwimmbecken. Am Ende kann, wer so weit ist, das Abzeichen ablegen.', highlights: ['Kleine Gruppen mit höchstens zehn Kindern', 'Abzeichen Seepferdchen oder Bronze möglich'], categories: ['sport'], hosts: [1], place: 10, when: weekly('2027-07-06', '10:00', '11:00', 'FREQ=WEEKLY;COUNT=4'), fee: 2000, ages: [6, 10], max: 10, bring: 'Badesachen, Handtuch und Sonnencreme', question: 'Kann Ihr Kind bereits 25 Meter schwimmen?' },
  { name: 'Zeltlager am Mustersee', teaser: 'Drei Nächte unter freiem Himmel', about: 'Wir schlagen unsere Zelte direkt am See auf, kochen über dem Feuer, baden, spielen und erzählen Geschichten, bis die Sterne herauskommen.', highlights: ['Übernachtung in Gruppenzelten', 'Lagerfeuer und Stockbrot', 'Nachtwanderung und Badespaß'], categories: ['natur', 'ausflug'], hosts: [0], place: 13, when: camp('2027-07-12', '10:00', '2027-07-15', '14:00'), fee: 8900, ages: [9, 14], max: 30, min: 15, bring: 'Schlafsack, Isomatte, Taschenlampe, wetterfeste Kleidung', images: 3, question: 'Darf Ihr Kind unter Aufsicht im See baden?' },
  { name: 'Kräuterwanderung im Stadtwald', teaser: 'Essbare Pflanzen entdecken', about: 'Welche Pflanzen am Wegesrand kann man essen, und welche lässt man besser stehen? Auf einer gemütlichen Runde sammeln wir Kräuter und machen daraus einen Kräuterquark.', highlights: ['Pflanzen bestimmen mit Lupe und Bestimmungsbuch', 'Kräuterquark zum Probieren'], categories: ['natur'], hosts: [3], place: 3, when: once('2027-07-08', '10:00', '13:00'), fee: 300, ages: [8, 13], max: 15 },
  { name: 'Roboter bauen mit Calliope', teaser: 'Programmieren für Einsteiger', about: 'Mit dem Mini-Computer Calliope lassen wir Lichter blinken, messen die Temperatur und bauen am Ende einen kleinen fahrenden Roboter.', highlights: ['Programmieren mit Blöcken, ganz ohne Vorkenntnisse', 'Jedes Kind baut einen eigenen Roboter', 'Vorführung für die Eltern am letzten Tag'], categories: ['technik'], hosts: [8], place: 8, when: days('2027-07-19', 3, '10:00', '14:00'), fee: 3500, ages: [9, 13], max: 12, images: 2 },
  { name: 'Comic-Werkstatt', teaser: 'Eigene Geschichten zeichnen', about: 'Von der Idee zur fertigen Comicseite: Wir entwickeln Figuren, zeichnen Sprechblasen und Panels und drucken zum Schluss ein gemeinsames Heft.', highlights: ['Zeichentricks von einer echten Illustratorin', 'Ein gemeinsames Comicheft für alle zum Mitnehmen'], categories: ['kreativ'], hosts: [2, 6], place: 2, when: weekly('2027-07-07', '14:00', '16:00', 'FREQ=WEEKLY;COUNT=4'), fee: 1200, ages: [8, 14], max: 14 },
  { name: 'Trommelworkshop', teaser: 'Rhythmen aus aller Welt', about: 'Djemben, Cajones und Bodypercussion: Gemeinsam lernen wir Rhythmen aus Westafrika, Brasilien und Kuba. Vorkenntnisse braucht niemand.', highlights: ['Instrumente werden gestellt', 'Kleines Konzert zum Abschluss'], categories: ['musik'], hosts: [4], place: 4, when: once('2027-07-09', '10:00', '12:00'), fee: 0, ages: [6, 12], max: 16 },
  { name: 'Ein Tag bei der Feuerwehr', teaser: 'Schläuche, Leitern und Löschübungen', about: 'Die Jugendfeuerwehr öffnet die Wache: Ihr sitzt im Löschfahrzeug, probiert die Ausrüstung an und löscht mit der Kübelspritze ein echtes Feuer.', highlights: ['Fahrt im Feuerwehrauto', 'Löschübung mit Wasser', 'Mittagessen an der Wache'], categories: ['ausflug', 'technik'], hosts: [5], place: 5, when: once('2027-07-10', '10:00', '15:00'), fee: 0, ages: [8, 14], max: 20, images: 2 },
  { name: 'Pizza backen wie in Italien', teaser: 'Teig kneten, belegen, genießen', about: 'Wir setzen einen echten Pizzateig an, schnippeln Gemüse und belegen unsere Pizzen ganz nach Geschmack. Gegessen wird natürlich gemeinsam.', highlights: ['Jedes Kind backt seine eigene Pizza', 'Rezeptheft zum Mitnehmen'], categories: ['kochen'], hosts: [9], place: 9, when: once('2027-07-13', '11:00', '14:00'), fee: 800, ages: [7, 12], max: 12, bring: 'Schürze und eine Dose für Reste', question: 'Hat Ihr Kind Lebensmittelallergien?' },
  { name: 'Ponytag auf dem Lindenhof', teaser: 'Putzen, Führen, erste Reitversuche', about: 'Einen Vormittag lang kümmert ihr euch um die Schulponys: striegeln, Hufe auskratzen, führen und zum Schluss eine Runde reiten.', highlights: ['Umgang mit Ponys von Anfang an', 'Geführtes Reiten in der Halle'], categories: ['natur', 'sport'], hosts: [7], place: 7, when: once('2027-07-14', '09:00', '13:00'), fee: 2500, ages: [6, 10], max: 8, bring: 'Feste Schuhe und lange Hose; Reithelme werden gestellt' },
  { name: 'Theater-Ferienwoche', teaser: 'In fünf Tagen auf die Bühne', about: 'Wir erfinden gemeinsam ein Stück, proben Szenen, basteln Kostüme und führen es am Freitag vor Publikum auf.', highlights: ['Schauspiel- und Improvisationsübungen', 'Kostüme und Bühnenbild selbst gemacht', 'Aufführung am Freitagnachmittag'], categories: ['musik'], hosts: [0, 4], place: 0, when: days('2027-07-26', 5, '10:00', '15:00'), fee: 6000, ages: [9, 14], max: 18, min: 8, images: 2 },
  { name: 'Batiken und Färben', teaser: 'T-Shirts in allen Farben', about: 'Knoten, abbinden, eintauchen: Mit Batikfarben gestaltet ihr T-Shirts und Stoffbeutel mit Spiralen, Streifen und Sternen.', highlights: ['Ein T-Shirt und ein Stoffbeutel pro Kind', 'Farben, die die Wäsche überstehen'], categories: ['kreativ'], hosts: [6], place: 6, when: once('2027-07-15', '14:00', '17:00'), fee: 700, ages: [6, 12], max: 15, bring: 'Kleidung, die schmutzig werden darf' },
  { name: 'Nachtwanderung mit Fledermäusen', teaser: 'Mit dem Detektor auf Entdeckungstour', about: 'Wenn es dunkel wird, gehen die Fledermäuse auf Jagd. Mit Ultraschall-Detektoren machen wir ihre Rufe hörbar und lernen, wie sie leben.', highlights: ['Fledermausdetektoren zum Ausprobieren', 'Taschenlampenwanderung durch den Stadtwald'], categories: ['natur'], hosts: [3], place: 3, when: once('2027-07-16', '20:30', '23:00'), fee: 300, ages: [8, 14], max: 20, bring: 'Taschenlampe und warme Jacke' },
  { name: 'Stop-Motion-Filmwerkstatt', teaser: 'Trickfilme mit dem Tablet', about: 'Knete, Lego oder Papierfiguren: Bild für Bild entsteht ein eigener kleiner Trickfilm, den ihr am Ende mit Geräuschen und Musik vertont.', highlights: ['Arbeit in kleinen Filmteams', 'Filmpremiere mit Popcorn'], categories: ['technik', 'kreativ'], hosts: [8, 2], place: 8, when: days('2027-08-02', 3, '10:00', '14:00'), fee: 3000, ages: [10, 14], max: 10 },
  { name: 'Kinderkochkurs: gesund und lecker', teaser: 'Jeden Donnerstag ein neues Rezept', about: 'Fünf Donnerstage, fünf Gerichte: Wir kochen Gemüsesuppe, Pfannkuchen, Ofengemüse, Couscous-Salat und zum Abschluss ein Menü für die Familie.', highlights: ['Einfache Rezepte zum Nachkochen', 'Küchenführerschein am Ende'], categories: ['kochen'], hosts: [9], place: 9, when: weekly('2027-07-08', '15:00', '17:30', 'FREQ=WEEKLY;COUNT=5'), fee: 2500, ages: [8, 12], max: 12, bring: 'Schürze und eine Dose für Reste' },
  { name: 'Bogenschießen für Einsteiger', teaser: 'Zielen, spannen, treffen', about: 'Auf dem Sportplatz lernt ihr den sicheren Umgang mit Pfeil und Bogen und schießt auf Scheiben in unterschiedlichen Entfernungen.', highlights: ['Material wird gestellt', 'Kleiner Wettbewerb zum Schluss'], categories: ['sport'], hosts: [1], place: 1, when: once('2027-07-20', '10:00', '13:00'), fee: 1500, ages: [10, 14], max: 10, state: 'cancelled', comment: 'Trainer erkrankt, kein Ersatz gefunden.' },
  { name: 'Ausflug in den Kletterwald', teaser: 'Hoch hinaus zwischen den Baumwipfeln', about: 'Mit dem Bus fahren wir in den Kletterwald. Nach einer Sicherheitseinweisung geht es über Hängebrücken, Seilbahnen und Kletterwände.', highlights: ['Parcours in verschiedenen Schwierigkeitsstufen', 'Betreuung durch geschulte Trainer', 'Busfahrt hin und zurück'], categories: ['ausflug', 'sport'], hosts: [0], place: 11, when: once('2027-07-21', '09:00', '16:00'), fee: 3200, ages: [9, 14], max: 20, bring: 'Sportkleidung, Handschuhe, Lunchpaket, Trinkflasche', images: 2 },
  { name: 'Lesenacht in der Bibliothek', teaser: 'Mit Taschenlampe zwischen den Regalen', about: 'Wenn die Bibliothek schließt, beginnt unser Abenteuer: Vorlesen, Rätselrallye, Gruselgeschichten und Übernachtung zwischen den Bücherregalen.', highlights: ['Bücherrallye durch das ganze Haus', 'Frühstück am nächsten Morgen'], categories: ['spiel'], hosts: [2], place: 2, when: camp('2027-07-23', '18:00', '2027-07-24', '09:00'), fee: 500, ages: [8, 11], max: 20, bring: 'Schlafsack, Isomatte, Taschenlampe, Lieblingsbuch' },
  { name: 'Ferien-Bandprojekt', teaser: 'Gemeinsam einen Song aufnehmen', about: 'Ihr gründet eine Band für eine Woche: Schlagzeug, Bass, Gitarre, Keyboard und Gesang. Am Ende nehmen wir euren Song im Studio der Musikschule auf.', highlights: ['Alle Instrumente vor Ort', 'Aufnahme im Tonstudio', 'Der Song für alle zum Herunterladen'], categories: ['musik'], hosts: [4], place: 4, when: days('2027-08-09', 5, '10:00', '15:00'), fee: 5000, ages: [11, 14], max: 8 },
  { name: 'Upcycling-Werkstatt', teaser: 'Aus Alt mach Neu', about: 'Aus Tetrapaks werden Geldbörsen, aus alten Jeans Taschen und aus Dosen Windlichter. Nachhaltig und schön zugleich.', highlights: ['Werkzeug und Material werden gestellt', 'Tipps zum Müllvermeiden'], categories: ['kreativ', 'natur'], hosts: [6], place: 6, when: once('2027-07-22', '10:00', '13:00'), fee: 500, ages: [7, 12], max: 12, bring: 'Eine alte Jeans oder ein altes T-Shirt, wenn vorhanden' },
  { name: 'Bachsafari', teaser: 'Was lebt im Mühlenbach?', about: 'In Gummistiefeln geht es in den Bach. Mit Keschern fangen wir Bachflohkrebse und Köcherfliegenlarven und erfahren, wie sauber das Wasser ist.', highlights: ['Tiere unter dem Mikroskop', 'Wasseruntersuchung wie die Profis'], categories: ['natur'], hosts: [3], place: 14, when: once('2027-07-27', '10:00', '13:00'), fee: 0, ages: [6, 10], max: 15, bring: 'Gummistiefel und Wechselkleidung' },
  { name: 'Tischtennis-Turnier', teaser: 'Wer holt den Ferienpokal?', about: 'Ob Anfänger oder Vereinsspieler: Gespielt wird in Altersgruppen und Spielstärken, damit alle Spaß haben. Schläger können ausgeliehen werden.', highlights: ['Einzel- und Doppelwettbewerb', 'Pokale und Urkunden'], categories: ['sport', 'spiel'], hosts: [1], place: 1, when: once('2027-08-06', '10:00', '16:00'), fee: 0, ages: [8, 14], max: 32, bring: 'Hallenschuhe und Trinkflasche' },
  { name: 'Brettspiel-Nachmittag', teaser: 'Klassiker und neue Spiele testen', about: 'Jeden Freitag stehen über hundert Spiele bereit, vom Klassiker bis zur Neuheit. Das Team erklärt die Regeln. Einfach vorbeikommen, eine Anmeldung braucht es nicht.', highlights: ['Spiele für alle Altersgruppen', 'Saft und Kekse'], categories: ['spiel'], hosts: [0], place: 0, when: weekly('2027-07-09', '14:00', '17:00', 'FREQ=WEEKLY;COUNT=6'), fee: 0, ages: [6, 14], open: true },
  { name: 'Töpfern: Schalen und Tiere aus Ton', teaser: 'Formen, glasieren, brennen', about: 'Am ersten Tag formt ihr Schalen, Tiere oder Fantasiefiguren aus Ton, am zweiten Tag werden sie glasiert. Nach dem Brennen könnt ihr sie abholen.', highlights: ['Aufbautechnik und Daumenschalen', 'Glasieren in vielen Farben'], categories: ['kreativ'], hosts: [6], place: 6, when: days('2027-07-28', 2, '10:00', '13:00'), fee: 1800, ages: [7, 13], max: 10, bring: 'Kleidung, die schmutzig werden darf' },
  { name: 'Besuch im Tierpark', teaser: 'Fütterung und Blick hinter die Kulissen', about: 'Wir fahren mit dem Zug in den Tierpark, helfen bei einer Fütterung und besuchen die Tierpflegerinnen in Bereichen, die sonst niemand sieht.', highlights: ['Führung hinter den Kulissen', 'Zeit zum Spielen auf dem Abenteuerspielplatz'], categories: ['ausflug', 'natur'], hosts: [0], place: 11, when: once('2027-08-03', '09:00', '15:00'), fee: 1200, ages: [6, 10], max: 25, bring: 'Lunchpaket, Trinkflasche, Sonnenschutz' },
  { name: 'Erste Hilfe für Kinder', teaser: 'Pflaster, Verband, Notruf', about: 'Wie setze ich einen Notruf ab, wie lege ich einen Verband an und was mache ich bei einem Sonnenstich? Spielerisch lernen wir, im Notfall zu helfen.', highlights: ['Verbände an Puppen und aneinander üben', 'Erste-Hilfe-Urkunde'], categories: ['technik'], hosts: [5], place: 5, when: once('2027-08-05', '10:00', '13:00'), fee: 0, ages: [8, 12], max: 16, state: 'private_link', comment: 'Nur für die Ferienbetreuung der Grundschule am Park; Link geht an die Betreuung.' },
  { name: 'Minecraft-Workshop: Unsere Stadt in Blöcken', teaser: 'Musterstadt nachbauen', about: 'Gemeinsam bauen wir Rathaus, Schwimmbad und Jugendzentrum in Minecraft nach und überlegen, was in unserer Stadt noch fehlt.', highlights: ['Gemeinsamer Server im geschützten Netz', 'Vorstellung der Ideen im Rathaus'], categories: ['technik'], hosts: [8], place: 8, when: days('2027-07-19', 5, '13:00', '16:00'), fee: 2500, ages: [9, 13], max: 16 },
  { name: 'Waldolympiade', teaser: 'Spiele und Wettkämpfe im Wald', about: 'Zapfenweitwurf, Baumstammbalancieren und Blätterpuzzle: In Teams tretet ihr bei lustigen Disziplinen gegeneinander an.', highlights: ['Zehn Stationen im Stadtwald', 'Medaillen aus Holz'], categories: ['natur', 'sport'], hosts: [3, 1], place: 3, when: once('2027-07-29', '10:00', '15:00'), fee: 400, ages: [6, 11], max: 30, bring: 'Wetterfeste Kleidung, feste Schuhe, Lunchpaket' },
  { name: 'Experimente mit Wasser und Luft', teaser: 'Kleine Forscher, große Fragen', about: 'Warum schwimmt ein Schiff aus Eisen? Wie hoch fliegt eine Wasserrakete? An vier Vormittagen stellen wir Fragen und finden die Antworten durch Ausprobieren.', highlights: ['Wasserraketen bauen und starten', 'Forscherheft für zu Hause'], categories: ['technik'], hosts: [2], place: 2, when: weekly('2027-07-12', '10:00', '12:00', 'FREQ=WEEKLY;COUNT=4'), fee: 0, ages: [6, 9], max: 12 },
  { name: 'Hip-Hop-Tanzkurs', teaser: 'Moves für die Ferienparty', about: 'Dienstags und donnerstags lernt ihr eine Choreografie zu aktuellen Songs, die wir beim Abschlussfest der Ferienspiele auf der Bühne zeigen.', highlights: ['Grundschritte und Freestyle', 'Auftritt beim Abschlussfest'], categories: ['musik', 'sport'], hosts: [0], place: 0, when: weekly('2027-07-13', '16:00', '17:30', 'FREQ=WEEKLY;BYDAY=TU,TH;COUNT=6'), fee: 2000, ages: [9, 14], max: 16, bring: 'Turnschuhe und Trinkflasche' },
  { name: 'Fahrrad-Werkstatt', teaser: 'Platten flicken, Bremsen einstellen', about: 'Bringt euer Fahrrad mit! Wir flicken Schläuche, stellen Bremsen und Schaltung ein und machen die Räder fit für die Ferien.', highlights: ['Werkzeug und Ersatzteile vor Ort', 'Fahrradcheck zum Mitnehmen'], categories: ['technik'], hosts: [8], place: 8, when: once('2027-07-07', '10:00', '13:00'), fee: 0, ages: [9, 14], max: 10, bring: 'Das eigene Fahrrad' },
  { name: 'Fahrradtour zum Wasserschloss', teaser: '25 Kilometer mit Picknick', about: 'Auf ruhigen Wegen radeln wir zum Wasserschloss, machen Picknick im Schlosspark und erkunden den Burggraben.', highlights: ['Begleitung durch zwei erfahrene Tourenleiter', 'Picknick im Schlosspark'], categories: ['ausflug', 'sport'], hosts: [1], place: 12, when: once('2027-07-30', '09:00', '16:00'), fee: 500, ages: [10, 14], max: 15, bring: 'Verkehrssicheres Fahrrad, Helm, Lunchpaket', state: 'cancelled', comment: 'Brücke am Radweg gesperrt; Ersatztermin im Herbst.' },
  { name: 'Marmelade und Sirup selbst gemacht', teaser: 'Aus Beeren vom Markt', about: 'Wir kaufen Beeren auf dem Wochenmarkt und kochen daraus Marmelade und Sirup. Jedes Kind nimmt zwei Gläser mit nach Hause.', highlights: ['Einkauf auf dem Wochenmarkt', 'Etiketten selbst gestalten'], categories: ['kochen'], hosts: [9], place: 9, when: once('2027-08-04', '10:00', '13:00'), fee: 900, ages: [7, 12], max: 10, bring: 'Schürze' },
  { name: 'Schreibwerkstatt: Abenteuer auf Papier', teaser: 'Geschichten erfinden und vorlesen', about: 'Mit Schreibspielen, Bildern und Fundstücken kommen die Ideen von selbst. Am letzten Tag lesen alle, die möchten, ihre Geschichten vor.', highlights: ['Schreibspiele gegen die leere Seite', 'Lesung mit Kakao und Keksen'], categories: ['kreativ'], hosts: [2], place: 2, when: days('2027-08-09', 3, '10:00', '12:00'), fee: 0, ages: [9, 13], max: 12 },
  { name: 'Reiterferien auf dem Lindenhof', teaser: 'Eine Woche mit Pferden', about: 'Eine ganze Woche auf dem Reiterhof: Reitstunden in der Halle, Ausritt ins Gelände, Stallarbeit und Pferdewissen.', highlights: ['Täglich Reitunterricht', 'Ausritt am Freitag', 'Mittagessen auf dem Hof'], categories: ['sport', 'natur'], hosts: [7], place: 7, when: days('2027-08-02', 5, '09:00', '15:00'), fee: 12000, ages: [8, 14], max: 10, bring: 'Feste Schuhe, lange Hose, Regenjacke', images: 2, question: 'Hat Ihr Kind schon Reiterfahrung?', fileQuestion: 'Unterschriebene Einverständniserklärung des Reitvereins (PDF oder Foto)' },
  { name: 'Graffiti-Workshop', teaser: 'Sprühen an der legalen Wand', about: 'Von der Skizze zum fertigen Bild: Ein Graffiti-Künstler zeigt Techniken und Stile, dann gestalten wir gemeinsam die Wand am Jugendzentrum.', highlights: ['Skizzen- und Schriftentwicklung', 'Gemeinschaftsbild an der Hauswand'], categories: ['kreativ'], hosts: [0, 6], place: 0, when: days('2027-08-10', 2, '13:00', '17:00'), fee: 1500, ages: [11, 14], max: 12, bring: 'Alte Kleidung', state: 'reviewed' },
  { name: 'Schnupper-Judo', teaser: 'Fallen lernen ohne Angst', about: 'Beim Judo lernt ihr, sicher zu fallen, fair zu kämpfen und aufeinander aufzupassen. Drei Probestunden für alle, die Judo kennenlernen möchten.', highlights: ['Judoanzüge werden geliehen', 'Spiele zum Aufwärmen'], categories: ['sport'], hosts: [1], place: 1, when: weekly('2027-07-14', '17:00', '18:00', 'FREQ=WEEKLY;COUNT=3'), fee: 0, ages: [6, 10], max: 16 },
  { name: 'Floßbau am Mustersee', teaser: 'Bauen, testen, lossegeln', about: 'Aus Fässern, Brettern und Seilen baut ihr in Teams ein Floß. Am zweiten Tag wird es zu Wasser gelassen. Hält es?', highlights: ['Knotenkunde und Teamarbeit', 'Floßfahrt mit Schwimmweste'], categories: ['natur', 'ausflug'], hosts: [3, 0], place: 13, when: days('2027-07-26', 2, '10:00', '15:00'), fee: 1500, ages: [10, 14], max: 16, bring: 'Badesachen, Handtuch, Wechselkleidung', question: 'Kann Ihr Kind schwimmen (mindestens Bronze)?' },
  { name: 'Brot backen im Steinofen', teaser: 'Vom Korn zum Brot', about: 'Im alten Backhaus mahlen wir Korn, kneten Teig und backen im Holzofen Brot und Brötchen, die ihr mit nach Hause nehmt.', highlights: ['Getreide mahlen mit der Handmühle', 'Backen im echten Holzofen'], categories: ['kochen'], hosts: [9], place: 15, when: once('2027-07-17', '09:00', '13:00'), fee: 600, ages: [6, 11], max: 12 },
  { name: 'Recycling-Rallye', teaser: 'Wohin mit dem Müll?', about: 'Auf einer Rallye durch die Innenstadt findet ihr heraus, was mit unserem Müll passiert, und besucht den Wertstoffhof.', highlights: ['Sortierspiel gegen die Uhr', 'Besuch auf dem Wertstoffhof'], categories: ['natur'], hosts: [3], place: 12, when: once('2027-08-12', '10:00', '12:00'), fee: 0, ages: [6, 9], max: 20, state: 'private_link', comment: 'Angebot für die Kita-Hortgruppe Sonnenblume; nur per Link.' },
  { name: 'Ukulele in einer Woche', teaser: 'Die ersten Akkorde und ein Lied', about: 'Die Ukulele ist klein, handlich und schnell gelernt. In fünf Tagen schafft ihr die ersten Akkorde und begleitet ein ganzes Lied.', highlights: ['Leihinstrumente vorhanden', 'Liederheft zum Mitnehmen'], categories: ['musik'], hosts: [4], place: 4, when: days('2027-07-12', 5, '10:00', '11:30'), fee: 3500, ages: [8, 14], max: 8 },
  { name: 'Schach für Anfänger', teaser: 'Vom Bauern bis zum Schachmatt', about: 'Wie ziehen die Figuren, was ist eine Rochade, und wie setze ich matt? Jede Woche lernt ihr etwas Neues und spielt gleich gegeneinander.', highlights: ['Schachbretter für zu Hause zum Ausleihen', 'Simultanpartie gegen den Vereinsmeister'], categories: ['spiel'], hosts: [2], place: 2, when: weekly('2027-07-05', '15:00', '16:30', 'FREQ=WEEKLY;COUNT=6'), fee: 0, ages: [7, 14], max: 12 },
  { name: 'Feuerwehr-Spieletag', teaser: 'Wasserspiele und Löschrallye', about: 'Auf dem Hof der Feuerwache warten Wasserspiele, eine Löschrallye und eine Hüpfburg in Form eines Feuerwehrautos.', highlights: ['Spritzwand und Wasserparcours', 'Würstchen vom Grill'], categories: ['spiel', 'sport'], hosts: [5], place: 5, when: once('2027-08-07', '10:00', '14:00'), fee: 0, ages: [6, 12], max: 40, bring: 'Wechselkleidung und Handtuch' },
  { name: 'Schmuck aus Perlen und Draht', teaser: 'Armbänder, Ketten und Anhänger', about: 'Mit Perlen, Draht und Lederbändern entstehen Armbänder, Ketten und Schlüsselanhänger zum Selbertragen oder Verschenken.', highlights: ['Große Perlenauswahl', 'Geschenkverpackung inklusive'], categories: ['kreativ'], hosts: [6], place: 6, when: once('2027-07-19', '14:00', '16:00'), fee: 600, ages: [6, 11], max: 12, state: 'private_link', comment: 'Für die Kinder des Familienzentrums; Einladung per Link.' },
  { name: 'Sternwarte: Planeten gucken', teaser: 'Jupiter, Saturn und der Mond ganz nah', about: 'Im Sommer steht der Himmel voller Sterne. Durch das große Teleskop der Sternwarte schauen wir uns Planeten, den Mond und Sternhaufen an.', highlights: ['Blick durch das Spiegelteleskop', 'Sternbilder-Quiz'], categories: ['technik', 'natur'], hosts: [8], place: 16, when: once('2027-08-12', '21:00', '23:30'), fee: 300, ages: [9, 14], max: 20, bring: 'Warme Jacke', state: 'draft' },
  { name: 'Kanutour auf der Muster', teaser: 'Paddeln bis zur alten Mühle', about: 'Im Zweierkanadier paddeln wir gemütlich flussabwärts bis zur alten Mühle. Unterwegs gibt es eine Badepause und ein Picknick.', highlights: ['Einweisung an Land', 'Schwimmwesten für alle', 'Rücktransport mit dem Kleinbus'], categories: ['ausflug', 'sport'], hosts: [1], place: 11, when: once('2027-07-24', '10:00', '16:00'), fee: 3000, ages: [10, 14], max: 12, bring: 'Badesachen, Wechselkleidung, Lunchpaket', question: 'Kann Ihr Kind schwimmen (mindestens Bronze)?' },
  { name: 'Zirkusschule', teaser: 'Jonglieren, Balancieren, Akrobatik', about: 'Eine Woche lang verwandelt sich die Sporthalle in eine Manege. Ihr lernt jonglieren, auf dem Drahtseil balancieren und Akrobatik und zeigt alles in einer großen Vorstellung.', highlights: ['Viele Zirkusdisziplinen zum Ausprobieren', 'Große Vorstellung am Freitag'], categories: ['sport', 'musik'], hosts: [0], place: 1, when: days('2027-08-09', 5, '10:00', '15:00'), fee: 4000, ages: [6, 12], max: 25, min: 10, images: 3 },
  { name: 'Insektenhotel bauen', teaser: 'Ein Zuhause für Wildbienen', about: 'Aus Holz, Schilf und Lehm baut jedes Kind ein Insektenhotel für den eigenen Garten oder Balkon und lernt, welche Insekten einziehen.', highlights: ['Jedes Kind nimmt sein Insektenhotel mit', 'Wildbienen beobachten'], categories: ['natur', 'kreativ'], hosts: [3], place: 3, when: once('2027-07-06', '10:00', '13:00'), fee: 500, ages: [6, 10], max: 12 },
  { name: 'Escape Room in der Bibliothek', teaser: 'Rätseln gegen die Uhr', about: 'Ein geheimnisvoller Bibliothekar hat einen Schatz versteckt. In Teams knackt ihr Codes, findet versteckte Hinweise und öffnet das letzte Schloss.', highlights: ['Drei Termine mit neuen Rätseln', 'Teams von höchstens sechs Kindern'], categories: ['spiel'], hosts: [2], place: 2, when: weekly('2027-07-15', '15:00', '17:00', 'FREQ=WEEKLY;COUNT=3'), fee: 0, ages: [10, 14], max: 6 },
  { name: 'Eis selber machen', teaser: 'Erdbeer, Vanille und Schoko', about: 'Mit Eismaschine, Salz und Eiswürfeln stellen wir drei Sorten Eis her und probieren auch ein Eis ganz ohne Zucker.', highlights: ['Drei Sorten zum Probieren', 'Rezepte zum Nachmachen'], categories: ['kochen'], hosts: [9], place: 9, when: once('2027-08-10', '14:00', '16:00'), fee: 500, ages: [6, 10], max: 10, state: 'completed' },
  { name: 'Discgolf im Park', teaser: 'Frisbee trifft Golf', about: 'Mit Frisbeescheiben zielen wir auf Körbe im Stadtpark. Wer schafft den Parcours mit den wenigsten Würfen?', highlights: ['Scheiben werden gestellt', 'Neun Bahnen im Stadtpark'], categories: ['sport', 'spiel'], hosts: [1], place: 17, when: once('2027-07-31', '10:00', '12:00'), fee: 0, ages: [8, 14], max: 16 },
  { name: 'Fotosafari durch Musterstadt', teaser: 'Die Stadt mit anderen Augen sehen', about: 'Mit Kameras und Tablets gehen wir auf Motivsuche, lernen Bildaufbau und Licht kennen und gestalten eine kleine Ausstellung im Rathaus.', highlights: ['Kameras zum Ausleihen', 'Ausstellung im Rathausfoyer'], categories: ['kreativ', 'technik'], hosts: [8], place: 12, when: days('2027-08-05', 2, '10:00', '13:00'), fee: 800, ages: [10, 14], max: 10, state: 'draft' },
  { name: 'Bauernhof-Tag', teaser: 'Kühe, Hühner und Traktoren', about: 'Auf einem Bauernhof vor der Stadt füttern wir die Tiere, sammeln Eier, fahren auf dem Anhänger mit und machen Butter selbst.', highlights: ['Butter schütteln', 'Traktorfahrt über die Felder'], categories: ['ausflug', 'natur'], hosts: [9], place: 11, when: once('2027-07-28', '09:00', '14:00'), fee: 700, ages: [6, 9], max: 20, bring: 'Gummistiefel, Lunchpaket', state: 'completed' },
  { name: 'Kinderyoga', teaser: 'Bewegen, atmen, entspannen', about: 'Mit Tiergeschichten und Bewegungsspielen üben wir Yogahaltungen und lernen, wie man nach einem wilden Ferientag zur Ruhe kommt.', highlights: ['Geschichten zum Mitturnen', 'Entspannungsreise am Ende'], categories: ['sport'], hosts: [0], place: 0, when: weekly('2027-07-16', '10:00', '11:00', 'FREQ=WEEKLY;COUNT=4'), fee: 1200, ages: [6, 10], max: 12, bring: 'Bequeme Kleidung und eine Decke', state: 'reviewed' },
  { name: 'Holzwerkstatt: Vogelhaus bauen', teaser: 'Sägen, bohren, schrauben', about: 'Ihr lernt, sicher mit Säge, Bohrmaschine und Akkuschrauber umzugehen, und baut ein Vogelhaus, das ihr mit nach Hause nehmt.', highlights: ['Sicherer Umgang mit Werkzeug', 'Vogelhaus zum Mitnehmen'], categories: ['kreativ', 'technik'], hosts: [8], place: 8, when: once('2027-08-11', '10:00', '14:00'), fee: 1000, ages: [8, 13], max: 8, state: 'draft' },
  { name: 'Chorprojekt: Sing mit!', teaser: 'Fünf Tage, fünf Lieder', about: 'Popsongs, Kanons und ein Lied in einer fremden Sprache: Wir singen jeden Tag und geben zum Schluss ein kleines Konzert.', highlights: ['Stimmbildung mit Spaß', 'Abschlusskonzert'], categories: ['musik'], hosts: [4], place: 4, when: days('2027-08-02', 5, '14:00', '16:00'), fee: 0, ages: [6, 12], max: 30, state: 'completed' },
  { name: 'Geocaching-Schatzsuche', teaser: 'Mit GPS auf Spurensuche', about: 'Mit GPS-Geräten suchen wir versteckte Schätze im Stadtwald, lösen Rätsel an den Stationen und verstecken zum Schluss einen eigenen Cache.', highlights: ['GPS-Geräte werden gestellt', 'Eigener Cache zum Verstecken'], categories: ['natur', 'ausflug'], hosts: [3], place: 3, when: once('2027-07-23', '10:00', '14:00'), fee: 300, ages: [9, 14], max: 16, state: 'draft' },
  { name: 'Badespaß-Tag im Freibad', teaser: 'Rutschen, Springen, Wasserball', about: 'Ein ganzer Tag im Freibad mit Spielen im Wasser, Sprungbrett-Wettbewerb und Wasserballturnier. Die Aufsicht übernehmen Rettungsschwimmer.', highlights: ['Wasserballturnier', 'Sprungbrett-Wettbewerb'], categories: ['sport', 'spiel'], hosts: [1], place: 10, when: once('2027-08-13', '11:00', '16:00'), fee: 0, ages: [6, 14], max: 50, bring: 'Badesachen, Handtuch, Sonnencreme', state: 'reviewed' },
  { name: 'Kasperletheater basteln', teaser: 'Handpuppen und eine kleine Bühne', about: 'Aus Pappmaché, Stoff und Wolle entstehen Handpuppen. Mit einer selbst gebauten Bühne spielen wir am zweiten Tag ein Stück.', highlights: ['Jedes Kind nimmt seine Puppe mit', 'Aufführung für die Eltern'], categories: ['kreativ', 'musik'], hosts: [6], place: 6, when: days('2027-07-12', 2, '10:00', '12:00'), fee: 800, ages: [6, 9], max: 10, state: 'draft' },
  { name: 'Abschlussfest der Ferienspiele', teaser: 'Mit Bühne, Spielen und Grill', about: 'Zum Ende der Ferien feiern wir gemeinsam auf dem Marktplatz: mit Auftritten aus den Ferienkursen, Spielstationen, Kinderschminken und Grill. Alle sind willkommen, eine Anmeldung braucht es nicht.', highlights: ['Auftritte aus Tanzkurs, Zirkusschule und Band', 'Spielstationen aller Vereine', 'Grill und Getränke'], categories: ['spiel'], hosts: [0, 1, 5], place: 12, when: once('2027-08-14', '14:00', '19:00'), fee: 0, ages: [6, 14], open: true, images: 2 },
];

export type DemoFamily = { firstname: string; lastname: string; street: string; phone: string; children: { firstname: string; dateOfBirth: string }[] };

export const FAMILIES: DemoFamily[] = [
  { firstname: 'Katrin', lastname: 'Müller', street: 'Ahornweg 3', phone: '012345 20301', children: [{ firstname: 'Emma', dateOfBirth: '2016-03-14' }, { firstname: 'Paul', dateOfBirth: '2019-09-02' }] },
  { firstname: 'Stefan', lastname: 'Schmidt', street: 'Birkenallee 17', phone: '012345 20302', children: [{ firstname: 'Mia', dateOfBirth: '2015-06-21' }] },
  { firstname: 'Ayşe', lastname: 'Yılmaz', street: 'Gartenstraße 8', phone: '012345 20303', children: [{ firstname: 'Elif', dateOfBirth: '2017-01-30' }, { firstname: 'Can', dateOfBirth: '2014-11-05' }, { firstname: 'Deniz', dateOfBirth: '2020-04-18' }] },
  { firstname: 'Marta', lastname: 'Nowak', street: 'Lindenstraße 40', phone: '012345 20304', children: [{ firstname: 'Lena', dateOfBirth: '2018-08-09' }] },
  { firstname: 'Thomas', lastname: 'Becker', street: 'Am Mühlbach 2', phone: '012345 20305', children: [{ firstname: 'Ben', dateOfBirth: '2015-02-27' }, { firstname: 'Lina', dateOfBirth: '2017-12-12' }] },
  { firstname: 'Julia', lastname: 'Hoffmann', street: 'Rosenweg 11', phone: '012345 20306', children: [{ firstname: 'Noah', dateOfBirth: '2016-07-04' }] },
  { firstname: 'Andreas', lastname: 'Schulz', street: 'Kirchplatz 5', phone: '012345 20307', children: [{ firstname: 'Hannah', dateOfBirth: '2014-05-16' }, { firstname: 'Jonas', dateOfBirth: '2018-10-23' }] },
  { firstname: 'Sandra', lastname: 'Wagner', street: 'Feldstraße 22', phone: '012345 20308', children: [{ firstname: 'Leon', dateOfBirth: '2019-03-08' }, { firstname: 'Sophie', dateOfBirth: '2016-12-01' }, { firstname: 'Felix', dateOfBirth: '2013-09-19' }] },
  { firstname: 'Piotr', lastname: 'Kowalski', street: 'Bahnhofstraße 9', phone: '012345 20309', children: [{ firstname: 'Anna', dateOfBirth: '2017-04-25' }] },
  { firstname: 'Nicole', lastname: 'Fischer', street: 'Schillerstraße 14', phone: '012345 20310', children: [{ firstname: 'Luca', dateOfBirth: '2015-08-30' }, { firstname: 'Marie', dateOfBirth: '2018-02-11' }] },
  { firstname: 'Markus', lastname: 'Weber', street: 'Goethering 7', phone: '012345 20311', children: [{ firstname: 'Finn', dateOfBirth: '2016-11-17' }] },
  { firstname: 'Claudia', lastname: 'Meyer', street: 'Waldweg 31', phone: '012345 20312', children: [{ firstname: 'Clara', dateOfBirth: '2014-01-09' }, { firstname: 'Emil', dateOfBirth: '2020-06-06' }] },
  { firstname: 'Thi Lan', lastname: 'Nguyen', street: 'Kantstraße 19', phone: '012345 20313', children: [{ firstname: 'Minh', dateOfBirth: '2017-09-28' }] },
  { firstname: 'Frank', lastname: 'Schäfer', street: 'Seestraße 4', phone: '012345 20314', children: [{ firstname: 'Ida', dateOfBirth: '2019-05-03' }, { firstname: 'Theo', dateOfBirth: '2016-04-22' }] },
  { firstname: 'Miriam', lastname: 'Koch', street: 'Hauptstraße 56', phone: '012345 20315', children: [{ firstname: 'Jakob', dateOfBirth: '2015-10-14' }, { firstname: 'Lotta', dateOfBirth: '2018-07-07' }, { firstname: 'Mats', dateOfBirth: '2020-12-19' }] },
];

// ---- the season (seed.ts `season`): what families and the team did with the programme ----------------

/**
 * The autumn edition, drawn by lot: families applied for these few places with priorities; the lot was
 * drawn (seed 2027) and its decisions committed.
 */
export const AUTUMN_EDITION = { name: 'Herbstferien 2027', alias: 'herbstferien-2027' } as const;

export const AUTUMN_OFFERS: DemoOffer[] = [
  { name: 'Kürbisse schnitzen', teaser: 'Gruselige und lustige Gesichter', about: 'Wir höhlen Kürbisse aus, schnitzen Gesichter und machen aus dem Fruchtfleisch eine Suppe.', highlights: ['Jedes Kind nimmt seinen Kürbis mit', 'Kürbissuppe zum Probieren'], categories: ['kreativ', 'kochen'], hosts: [9], place: 15, when: once('2027-10-12', '10:00', '13:00'), fee: 900, ages: [6, 14], max: 6 },
  { name: 'Drachen bauen und steigen lassen', teaser: 'Herbstwind auf dem Galgenberg', about: 'Aus Stäben, Folie und Schnur baut jedes Kind einen Drachen, den wir bei gutem Wind auf dem Galgenberg steigen lassen.', highlights: ['Eigener Drachen zum Mitnehmen', 'Drachenfest zum Abschluss'], categories: ['kreativ', 'natur'], hosts: [8], place: 16, when: once('2027-10-14', '10:00', '15:00'), fee: 1500, ages: [6, 14], max: 5 },
  { name: 'Herbstwald-Rallye', teaser: 'Blätter, Pilze, Tierspuren', about: 'Auf einer Rallye durch den Stadtwald bestimmen wir Blätter, suchen Tierspuren und lernen, welche Pilze man besser stehen lässt.', highlights: ['Rallye in kleinen Teams', 'Urkunde für alle'], categories: ['natur'], hosts: [3], place: 3, when: once('2027-10-18', '10:00', '13:00'), fee: 400, ages: [6, 14], max: 4 },
];

/** The lot's seed, recorded on the edition's run: the same seed and applications give the same winners. */
export const AUTUMN_SEED = 2027;

/**
 * Where each summer application ends up (D10 states a client can reach), by position in the plan: applied
 * ones stay `confirmed`, `waitlisted` or `waiting`; the others are moved on from there by a transition.
 */
export const SUMMER_OUTCOMES = [
  'confirmed', 'confirmed', 'waitlisted', 'confirmed', 'waiting', 'confirmed', 'rejected', 'confirmed',
  'withdrawn', 'confirmed', 'participated', 'unfulfilled', 'confirmed', 'noshow', 'waitlisted', 'confirmed',
] as const;
export type SummerOutcome = (typeof SUMMER_OUTCOMES)[number];
