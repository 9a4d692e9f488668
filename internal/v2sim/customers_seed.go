package v2sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// countrySeed holds what makes a seeded customer of one country look real.
type countrySeed struct {
	code        string
	weight      int
	forms       []string // legal forms
	surnames    []string
	firstNames  []string
	sectors     []string
	brands      []string
	cities      []citySeed
	streets     []string
	publicNames []string // fmt patterns taking the city
	phone       string   // international prefix
	tld         string
	taxID       func(r *rand.Rand) string
}

type citySeed struct{ name, postalCode, area string }

func digits(r *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		b.WriteByte(byte('0' + r.IntN(10)))
	}
	return b.String()
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

var slugFolder = strings.NewReplacer("ä", "ae", "ö", "oe", "ü", "ue", "Ä", "ae", "Ö", "oe", "Ü", "ue", "ß", "ss",
	"é", "e", "è", "e", "ê", "e", "ë", "e", "â", "a", "à", "a", "á", "a", "í", "i", "ì", "i", "ó", "o", "ò", "o",
	"ô", "o", "ú", "u", "ù", "u", "ñ", "n", "ç", "c", "É", "e", "&", " ")

// slug turns a name into the ASCII words of an e-mail address or domain.
func slug(s string, sep string) string {
	s = strings.ToLower(slugFolder.Replace(s))
	words := strings.FieldsFunc(s, func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') })
	return strings.Join(words, sep)
}

// countrySeeds are the European markets of the seeded customers (Italy first: the portal's main market).
func countrySeeds() []countrySeed {
	return []countrySeed{
		{code: "IT", weight: 50, forms: []string{"S.r.l.", "S.p.A.", "S.n.c.", "S.a.s.", "S.r.l.s."},
			surnames:   []string{"Rossi", "Bianchi", "Ferrari", "Esposito", "Romano", "Colombo", "Ricci", "Marino", "Greco", "Bruno", "Gallo", "Conti", "De Luca", "Mancini", "Costa", "Giordano", "Rizzo", "Lombardi", "Moretti", "Barbieri", "Fontana", "Santoro", "Mariani", "Rinaldi", "Caruso", "Ferrara", "Galli", "Martini", "Leone", "Longo", "Gentile", "Martinelli", "Vitale", "Serra", "Coppola", "De Santis", "D'Angelo", "Marchetti", "Parisi", "Villa"},
			firstNames: []string{"Marco", "Giulia", "Alessandro", "Francesca", "Luca", "Chiara", "Andrea", "Sara", "Matteo", "Elena", "Davide", "Valentina", "Simone", "Martina", "Federico", "Laura"},
			sectors:    []string{"Impianti", "Logistica", "Costruzioni", "Meccanica", "Alimentari", "Tessile", "Trasporti", "Consulting", "Arredamenti", "Ceramiche", "Elettronica", "Farmaceutica", "Vini", "Servizi", "Edilizia", "Energia", "Informatica", "Packaging", "Ottica", "Automazione", "Plastica", "Gioielli", "Calzature", "Distribuzione"},
			brands:     []string{"Nuova", "Euro", "Alpina", "Mediterranea", "Tecno", "Adriatica", "Italia", "Padana", "Ligure", "Sud"},
			cities: []citySeed{{"Milano", "20121", "02"}, {"Roma", "00184", "06"}, {"Torino", "10121", "011"}, {"Bologna", "40121", "051"},
				{"Firenze", "50122", "055"}, {"Napoli", "80133", "081"}, {"Verona", "37121", "045"}, {"Padova", "35122", "049"},
				{"Bergamo", "24121", "035"}, {"Brescia", "25121", "030"}, {"Genova", "16121", "010"}, {"Bari", "70121", "080"},
				{"Modena", "41121", "059"}, {"Treviso", "31100", "0422"}, {"Vicenza", "36100", "0444"}, {"Parma", "43121", "0521"}},
			streets:     []string{"Via Roma", "Corso Buenos Aires", "Via Garibaldi", "Viale Monza", "Via Mazzini", "Via Dante", "Corso Vittorio Emanuele II", "Via dell'Industria", "Via Verdi", "Viale Europa", "Via Marconi", "Via XX Settembre"},
			publicNames: []string{"Comune di %s", "Azienda Ospedaliera di %s", "Istituto Comprensivo %s", "Camera di Commercio di %s"},
			phone:       "+39", tld: "it",
			taxID: func(r *rand.Rand) string { return "IT" + digits(r, 11) }},
		{code: "DE", weight: 14, forms: []string{"GmbH", "AG", "GmbH & Co. KG", "KG"},
			surnames:   []string{"Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Hoffmann", "Schulz", "Koch", "Richter", "Klein", "Wolf", "Schröder", "Neumann"},
			firstNames: []string{"Lukas", "Anna", "Jonas", "Lea", "Felix", "Marie", "Paul", "Laura"},
			sectors:    []string{"Maschinenbau", "Logistik", "Bau", "Elektrotechnik", "Software", "Handel", "Medizintechnik", "Automotive", "Werkzeuge"},
			brands:     []string{"Nord", "Süd", "Rhein", "Alpen", "Euro", "Hanse"},
			cities: []citySeed{{"Berlin", "10115", "30"}, {"München", "80331", "89"}, {"Hamburg", "20095", "40"}, {"Köln", "50667", "221"},
				{"Frankfurt am Main", "60311", "69"}, {"Stuttgart", "70173", "711"}, {"Düsseldorf", "40213", "211"}},
			streets:     []string{"Hauptstraße", "Bahnhofstraße", "Industriestraße", "Schillerstraße", "Goethestraße", "Gewerbepark"},
			publicNames: []string{"Stadtwerke %s", "Stadt %s", "Klinikum %s"},
			phone:       "+49", tld: "de",
			taxID: func(r *rand.Rand) string { return "DE" + digits(r, 9) }},
		{code: "FR", weight: 12, forms: []string{"SAS", "SARL", "SA"},
			surnames:   []string{"Martin", "Bernard", "Dubois", "Thomas", "Robert", "Richard", "Petit", "Durand", "Leroy", "Moreau", "Simon", "Laurent", "Lefèvre", "Michel"},
			firstNames: []string{"Camille", "Louis", "Léa", "Hugo", "Chloé", "Lucas", "Manon", "Jules"},
			sectors:    []string{"Logistique", "Bâtiment", "Industries", "Conseil", "Distribution", "Énergie", "Transports", "Agroalimentaire"},
			brands:     []string{"Atlantique", "Provence", "Euro", "Nord", "Alpes"},
			cities: []citySeed{{"Paris", "75008", "1"}, {"Lyon", "69002", "4"}, {"Marseille", "13001", "4"}, {"Toulouse", "31000", "5"},
				{"Nantes", "44000", "2"}, {"Lille", "59000", "3"}, {"Bordeaux", "33000", "5"}},
			streets:     []string{"Rue de la République", "Avenue Jean Jaurès", "Boulevard Haussmann", "Rue Victor Hugo", "Rue du Commerce", "Avenue de la Gare"},
			publicNames: []string{"Ville de %s", "Centre Hospitalier de %s", "Métropole de %s"},
			phone:       "+33", tld: "fr",
			taxID: func(r *rand.Rand) string { return "FR" + digits(r, 11) }},
		{code: "ES", weight: 10, forms: []string{"S.L.", "S.A."},
			surnames:   []string{"García", "Fernández", "González", "Rodríguez", "López", "Martínez", "Sánchez", "Pérez", "Gómez", "Ruiz"},
			firstNames: []string{"Lucía", "Hugo", "Martina", "Pablo", "Sofía", "Daniel", "Paula", "Álvaro"},
			sectors:    []string{"Logística", "Construcciones", "Ingeniería", "Distribuciones", "Alimentación", "Energía", "Textil"},
			brands:     []string{"Ibérica", "Levante", "Norte", "Atlántica", "Sur"},
			cities: []citySeed{{"Madrid", "28001", "91"}, {"Barcelona", "08001", "93"}, {"Valencia", "46001", "96"}, {"Sevilla", "41001", "95"},
				{"Bilbao", "48001", "94"}, {"Zaragoza", "50001", "976"}},
			streets:     []string{"Calle Mayor", "Gran Vía", "Avenida Diagonal", "Calle de Alcalá", "Paseo de la Castellana", "Calle Real"},
			publicNames: []string{"Ayuntamiento de %s", "Hospital Universitario de %s"},
			phone:       "+34", tld: "es",
			taxID: func(r *rand.Rand) string { return "ES" + string(rune('A'+r.IntN(8))) + digits(r, 8) }},
		{code: "NL", weight: 6, forms: []string{"B.V.", "N.V."},
			surnames:   []string{"de Vries", "Jansen", "Bakker", "Visser", "Smit", "Meijer", "de Boer", "Mulder", "de Groot", "Bos"},
			firstNames: []string{"Daan", "Emma", "Sem", "Julia", "Lucas", "Mila"},
			sectors:    []string{"Logistiek", "Techniek", "Bouw", "Handel", "Installatie", "Agri"},
			brands:     []string{"Noord", "Holland", "Delta", "Polder"},
			cities: []citySeed{{"Amsterdam", "1012 AB", "20"}, {"Rotterdam", "3011 AA", "10"}, {"Utrecht", "3511 AA", "30"},
				{"Eindhoven", "5611 AA", "40"}, {"Den Haag", "2511 AA", "70"}},
			streets:     []string{"Keizersgracht", "Stationsweg", "Industrieweg", "Kerkstraat", "Dorpsstraat"},
			publicNames: []string{"Gemeente %s", "Hogeschool %s"},
			phone:       "+31", tld: "nl",
			taxID: func(r *rand.Rand) string { return "NL" + digits(r, 9) + "B" + digits(r, 2) }},
		{code: "AT", weight: 4, forms: []string{"GmbH", "AG"},
			surnames:   []string{"Gruber", "Huber", "Bauer", "Wagner", "Pichler", "Steiner", "Moser", "Mayer"},
			firstNames: []string{"Elias", "Anna", "Jakob", "Lena", "Tobias", "Sophie"},
			sectors:    []string{"Holzbau", "Logistik", "Tourismus", "Maschinenbau", "Handel"},
			brands:     []string{"Alpen", "Donau", "Tirol", "Steirer"},
			cities: []citySeed{{"Wien", "1010", "1"}, {"Graz", "8010", "316"}, {"Linz", "4020", "732"}, {"Salzburg", "5020", "662"},
				{"Innsbruck", "6020", "512"}},
			streets:     []string{"Mariahilfer Straße", "Landstraße", "Hauptplatz", "Bahnhofstraße"},
			publicNames: []string{"Stadt %s", "Landeskrankenhaus %s"},
			phone:       "+43", tld: "at",
			taxID: func(r *rand.Rand) string { return "ATU" + digits(r, 8) }},
		{code: "BE", weight: 4, forms: []string{"BV", "NV", "SRL", "SA"},
			surnames:    []string{"Peeters", "Janssens", "Maes", "Jacobs", "Mertens", "Willems", "Dupont", "Lambert"},
			firstNames:  []string{"Noah", "Olivia", "Louis", "Emma", "Arthur", "Louise"},
			sectors:     []string{"Logistics", "Chemicals", "Construction", "Food", "Consulting"},
			brands:      []string{"Benelux", "Flandria", "Meuse", "Brabant"},
			cities:      []citySeed{{"Bruxelles", "1000", "2"}, {"Antwerpen", "2000", "3"}, {"Gent", "9000", "9"}, {"Liège", "4000", "4"}},
			streets:     []string{"Rue Neuve", "Meir", "Avenue Louise", "Veldstraat"},
			publicNames: []string{"Ville de %s", "Stad %s"},
			phone:       "+32", tld: "be",
			taxID: func(r *rand.Rand) string { return "BE0" + digits(r, 9) }},
	}
}

// customerAttributes is the seeded free-form "attributes" object of a customer (A8: free nested JSON).
type customerAttributes struct {
	CreditRating string           `json:"creditRating"`
	Employees    int              `json:"employees,omitempty"`
	Billing      *billingSettings `json:"billing,omitempty"`
	Tags         []string         `json:"tags"`
}

type billingSettings struct {
	IBAN  string `json:"iban"`
	Terms string `json:"terms"`
}

// seedCustomers makes n deterministic customers. The first customers are "rich" (profiles, two owners, full
// attributes) so demo pages look real; the long tail is leaner so that 100,000 customers still fit the client's
// 64 MiB bound on the full list (docs/v2-assumptions.md A9).
func seedCustomers(n int, seed int64, cat *catalog) []*customer {
	r := rand.New(rand.NewPCG(uint64(seed), 0x5eed_c0ffee))
	countries := countrySeeds()
	totalWeight := 0
	for _, c := range countries {
		totalWeight += c.weight
	}
	base := time.Date(2023, 1, 9, 8, 0, 0, 0, time.UTC)
	taxIDs := make(map[string]bool, n)
	customers := make([]*customer, 0, n)
	nextProfileID := int32(1)
	for i := range n {
		id := int32(i + 1)
		w := r.IntN(totalWeight)
		cs := countries[0]
		for _, c := range countries {
			if w < c.weight {
				cs = c
				break
			}
			w -= c.weight
		}
		rich := i < 2000
		city := pick(r, cs.cities)
		segment := "BUSINESS"
		switch x := r.IntN(100); {
		case x < 10:
			segment = "PUBLIC"
		case x < 18:
			segment = "CONSUMER"
		}
		var name, email, industry string
		switch segment {
		case "PUBLIC":
			name = fmt.Sprintf(pick(r, cs.publicNames), city.name)
			email = "protocollo@" + slug(name, "-") + "." + cs.tld
			if cs.code != "IT" {
				email = "contact@" + slug(name, "-") + "." + cs.tld
			}
			industry = "Public sector"
		case "CONSUMER":
			first, last := pick(r, cs.firstNames), pick(r, cs.surnames)
			name = first + " " + last
			email = slug(first, "") + "." + slug(last, "") + fmt.Sprintf("%d@mail.example.%s", r.IntN(90)+10, cs.tld)
			industry = "Sole trader"
		default:
			sector := pick(r, cs.sectors)
			switch r.IntN(4) {
			case 0:
				name = pick(r, cs.surnames) + " & " + pick(r, cs.surnames) + " " + pick(r, cs.forms)
			case 1:
				name = pick(r, cs.brands) + " " + sector + " " + pick(r, cs.forms)
			default:
				name = pick(r, cs.surnames) + " " + sector + " " + pick(r, cs.forms)
			}
			domain := slug(strings.TrimSuffix(name, " "+lastWord(name)), "-")
			email = pick(r, []string{"info", "sales", "office", "amministrazione", "contact"}) + "@" + domain + "." + cs.tld
			industry = sector
		}
		taxID := cs.taxID(r)
		for taxIDs[taxID] {
			taxID = cs.taxID(r)
		}
		taxIDs[taxID] = true

		created := base.Add(time.Duration(r.IntN(700*24)) * time.Hour)
		updated := created.Add(time.Duration(r.IntN(60*24)) * time.Hour)
		c := &customer{
			ID:      id,
			Name:    name,
			TaxID:   taxID,
			Email:   email,
			Phone:   cs.phone + " " + city.area + " " + digits(r, 4) + " " + digits(r, 3+r.IntN(2)),
			Segment: segment,
			Status:  "ACTIVE",
			Address: address{
				Street:     fmt.Sprintf("%s %d", pick(r, cs.streets), 1+r.IntN(180)),
				City:       city.name,
				PostalCode: city.postalCode,
				Country:    cs.code,
			},
			Version:   1 + int64(r.IntN(4)),
			CreatedAt: created,
			UpdatedAt: updated,
		}
		c.Owners = []int64{cat.owners[r.IntN(len(cat.owners))].ID}
		if rich && r.IntN(3) == 0 {
			second := cat.owners[r.IntN(len(cat.owners))].ID
			if second != c.Owners[0] {
				c.Owners = append(c.Owners, second)
			}
		}
		for _, cfg := range cat.configurators {
			if r.IntN(100) < 55 {
				c.CPQIDs = append(c.CPQIDs, cfg.ID)
			}
		}
		if len(c.CPQIDs) == 0 {
			c.CPQIDs = []int32{cat.configurators[r.IntN(len(cat.configurators))].ID}
		}
		attrs := customerAttributes{CreditRating: pick(r, []string{"AA", "A", "A", "B", "B", "C"}), Tags: []string{}}
		if rich {
			attrs.Employees = 1 + r.IntN(900)
			attrs.Billing = &billingSettings{
				IBAN:  cs.code + digits(r, 2) + " **** **** " + digits(r, 4),
				Terms: pick(r, []string{"NET30", "NET60", "SEPA_DD", "NET30"}),
			}
			tags := []string{"priority", "multi-site", "green-energy", "public-tender", "reseller", "new-2026", industry}
			for range r.IntN(3) {
				t := pick(r, tags)
				if !slices.Contains(attrs.Tags, t) {
					attrs.Tags = append(attrs.Tags, t)
				}
			}
			profileCount := 0
			switch x := r.IntN(10); {
			case x < 3:
				profileCount = 1
			case x < 5:
				profileCount = 2
			}
			for p := range profileCount {
				first, last := pick(r, cs.firstNames), pick(r, cs.surnames)
				c.Profiles = append(c.Profiles, profile{
					ID:          nextProfileID,
					CustomerID:  id,
					Type:        []string{"BILLING", "TECHNICAL", "LEGAL", "SHIPPING"}[(p+r.IntN(2)*2)%4],
					ContactName: first + " " + last,
					Email:       slug(first, "") + "." + slug(last, "") + "@" + strings.SplitN(email, "@", 2)[1],
					Phone:       cs.phone + " " + city.area + " " + digits(r, 7),
					CreatedAt:   created.Add(time.Duration(24*(p+1)) * time.Hour),
				})
				nextProfileID++
			}
		}
		c.Attributes, _ = marshalJSON(attrs)
		c.index()
		customers = append(customers, c)
	}
	return customers
}

func lastWord(s string) string {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		return s[i+1:]
	}
	return s
}
