package v2sim

import (
	"slices"
	"strings"
)

// Product kinds (docs/v2-assumptions.md A5 #9).
const (
	kindMain  = "MAIN"
	kindAddon = "ADDON"
)

// Discount sides (A4 pricing step 3).
const (
	appliesActivation = "ACTIVATION"
	appliesRecurring  = "RECURRING"
	appliesBoth       = "BOTH"
)

// The two price lists every quote can use (A4 availablePricelists). The partner list is the standard list
// less partnerDiscountBP, rounded to the cent.
const (
	pricelistStandard = 1
	pricelistPartner  = 2
	partnerDiscountBP = 1500
)

// catalog is the read-only product data of the simulator: configurators, their TOFs, products, discounts,
// packages, price lists and the sales-user directory. It never changes after New, so it is read without the
// lock.
type catalog struct {
	configurators []*configurator
	cpqByID       map[int32]*configurator
	tofs          map[int32]*tof
	products      map[int32]*product
	discounts     map[int32]*discount
	packages      map[int32]*salesPackage
	pricelists    []pricelist
	owners        []owner
	ownerByID     map[int64]owner
	ownerByLogin  map[string]int64
}

type configurator struct {
	ID          int32
	Name        string
	Description string
	TOFs        []*tof
	Discounts   []*discount
}

type tof struct {
	ID          int32
	CPQID       int32
	Name        string
	Description string
	Products    []*product
	Packages    []*salesPackage
}

type product struct {
	ProductID    int32
	TOFProductID int32
	TOFID        int32
	Name         string
	Description  string
	Kind         string
	Default      bool
	Activation   Money // standard price list
	Recurring    Money // standard price list
	ParentIDs    []int32
}

// price answers the unit prices of the product on a price list.
func (p *product) price(pricelistID int32) (activation, recurring Money) {
	if pricelistID == pricelistPartner {
		return p.Activation - percentOf(p.Activation, partnerDiscountBP), p.Recurring - percentOf(p.Recurring, partnerDiscountBP)
	}
	return p.Activation, p.Recurring
}

// acceptsParent reports whether the add-on may sit under an item of product parentID (A5 #5).
func (p *product) acceptsParent(parentID int32) bool { return slices.Contains(p.ParentIDs, parentID) }

type discount struct {
	ID        int32
	CPQID     int32
	Name      string
	Percent   float64 // regular discounts
	AppliesTo string
	Extra     bool
	MaxValue  float64 // extra discounts: the largest discountValue accepted
}

type salesPackage struct {
	ID          int32
	TOFID       int32
	Name        string
	Description string
	Recurring   Money
}

type pricelist struct {
	ID   int32
	Name string
}

type owner struct {
	ID    int64
	Name  string
	Email string
	// Login is the user the owner signs in as (the token's preferred_username, A1): with RestrictToOwners a
	// user sees the customers of the owner whose login they are (docs/v2-assumptions.md A13). The spec
	// exposes no owner directory, so the wire documents never show it.
	Login string
}

// mainDefault answers the TOF's default MAIN product (A5 #4).
func (t *tof) mainDefault() *product {
	for _, p := range t.Products {
		if p.Kind == kindMain && p.Default {
			return p
		}
	}
	return nil
}

func (c *catalog) pricelistByID(id int32) (pricelist, bool) {
	for _, pl := range c.pricelists {
		if pl.ID == id {
			return pl, true
		}
	}
	return pricelist{}, false
}

// Compact constructors keep the seed table below readable.
func mainP(id int32, name, desc string, act, rec Money, def bool) *product {
	return &product{ProductID: id, Name: name, Description: desc, Kind: kindMain, Default: def, Activation: act, Recurring: rec}
}

func addon(id int32, name, desc string, act, rec Money, parents ...int32) *product {
	return &product{ProductID: id, Name: name, Description: desc, Kind: kindAddon, Activation: act, Recurring: rec, ParentIDs: parents}
}

func pkg(name, desc string, rec Money) *salesPackage {
	return &salesPackage{Name: name, Description: desc, Recurring: rec}
}

// newCatalog builds the fixed product data. Ids follow simple patterns so a person reading a request log can
// tell them apart: TOF ids are cpqId*10+n, tofProductIds tofId*100+n, product ids 101 and up, discount ids
// (cpqId-1)*10+n (8 and 9 are the extra discounts), owner ids 1001 to 1010.
func newCatalog() *catalog {
	type tofSeed struct {
		id         int32
		name, desc string
		products   []*product
		packages   []*salesPackage
	}
	type cpqSeed struct {
		id         int32
		name, desc string
		tofs       []tofSeed
		discounts  []*discount
	}
	seeds := []cpqSeed{
		{id: 1, name: "Business Mobile", desc: "Mobile voice and data plans, devices and fleet services for companies",
			tofs: []tofSeed{
				{id: 11, name: "Mobile plans", desc: "SIM-only voice and data plans", products: []*product{
					mainP(101, "Business Mobile 10GB", "Unlimited calls, 10 GB EU data", 1900, 1490, false),
					mainP(102, "Business Mobile 50GB", "Unlimited calls, 50 GB EU data", 4900, 2990, true),
					mainP(103, "Business Mobile Unlimited", "Unlimited calls and data, 5G priority", 4900, 4490, false),
					addon(104, "Roaming World pack", "500 minutes and 5 GB outside the EU", 0, 900, 101, 102, 103),
					addon(105, "Extra 20GB data", "20 GB more every month", 0, 750, 101, 102),
					addon(106, "Device insurance", "Theft and damage cover for one device", 0, 490, 101, 102, 103),
					addon(107, "Insurance abroad extension", "Extends the device insurance worldwide", 0, 250, 106),
					addon(108, "Dual SIM / eSIM", "A second SIM on the same number", 1000, 200, 102, 103),
				}, packages: []*salesPackage{
					pkg("Business Bundle", "Priority support and monthly usage report", 1500),
					pkg("Executive Bundle", "Dedicated account manager, same-day replacement", 2500),
				}},
				{id: 12, name: "Mobile devices", desc: "Smartphones for rent with optional cover", products: []*product{
					mainP(111, "Smartphone Pro 256GB", "Flagship smartphone, 24-month rental", 9900, 3990, false),
					mainP(112, "Smartphone Essential 128GB", "Mid-range smartphone, 24-month rental", 4900, 1990, true),
					mainP(113, "Rugged Phone X", "Shock and water proof phone for field teams", 7900, 2490, false),
					addon(114, "Screen protection", "Tempered glass and case", 1500, 0, 111, 112, 113),
					addon(115, "Extended warranty 36 months", "Warranty extended to 36 months", 0, 350, 111, 112, 113),
					addon(116, "Accidental damage cover", "Covers drops and liquid damage", 0, 290, 115),
					addon(117, "Mobile device management licence", "Remote management of the device", 0, 300, 111, 112, 113),
				}, packages: []*salesPackage{
					pkg("Device Care Plus", "Yearly device health check and battery swap", 900),
				}},
				{id: 13, name: "Fleet management", desc: "Vehicle tracking and fleet analytics", products: []*product{
					mainP(121, "Fleet Manager Basic", "Tracking and trip reports for up to 20 vehicles", 9900, 4900, true),
					mainP(122, "Fleet Manager Advanced", "Tracking, driver scoring and maintenance planning", 19900, 8900, false),
					addon(123, "GPS tracker", "Hard-wired tracker per vehicle", 4900, 500, 121, 122),
					addon(124, "Driver app", "Mobile app for drivers", 0, 300, 121, 122),
					addon(125, "Fuel card integration", "Imports fuel card transactions", 0, 1200, 122),
					addon(126, "Tracker backup battery", "Keeps the tracker alive when the engine is off", 1900, 0, 123),
				}, packages: []*salesPackage{
					pkg("Fleet Insights", "Quarterly fleet optimisation review", 3500),
				}},
			},
			discounts: []*discount{
				{ID: 1, Name: "Loyalty 10%", Percent: 10, AppliesTo: appliesRecurring},
				{ID: 2, Name: "Activation waiver 50%", Percent: 50, AppliesTo: appliesActivation},
				{ID: 3, Name: "Volume 5%", Percent: 5, AppliesTo: appliesBoth},
				{ID: 8, Name: "Retention extra", AppliesTo: appliesRecurring, Extra: true, MaxValue: 10},
				{ID: 9, Name: "Negotiated discount", AppliesTo: appliesBoth, Extra: true, MaxValue: 20},
			}},
		{id: 2, name: "Fibre & Connectivity", desc: "Fibre, fixed wireless and dedicated internet access",
			tofs: []tofSeed{
				{id: 21, name: "Business fibre", desc: "Shared fibre and fixed wireless access", products: []*product{
					mainP(131, "Fibre 1 Gbps", "FTTH 1 Gbps down, 300 Mbps up", 9900, 3990, true),
					mainP(132, "Fibre 2.5 Gbps", "FTTH 2.5 Gbps down, 1 Gbps up", 9900, 5990, false),
					mainP(133, "Fibre 10 Gbps", "XGS-PON 10 Gbps symmetric", 19900, 12900, false),
					mainP(134, "FWA 300 Mbps", "Fixed wireless access where fibre is not available", 4900, 2990, false),
					addon(135, "Static IP /29", "Block of 8 public addresses", 0, 1000, 131, 132, 133, 134),
					addon(136, "4G backup line", "Automatic failover on mobile data", 4900, 1500, 131, 132, 133),
					addon(137, "Managed router", "Business router managed by our NOC", 0, 900, 131, 132, 133, 134),
					addon(138, "Router on-site installation", "A technician installs and configures the router", 9900, 0, 137),
					addon(139, "Priority SLA 4h", "Fault repair within 4 hours", 0, 2500, 131, 132, 133),
				}, packages: []*salesPackage{
					pkg("Office Connect", "Wi-Fi survey and guest network setup", 1900),
					pkg("Always On", "Backup line monitoring and monthly availability report", 2900),
				}},
				{id: 22, name: "Dedicated connectivity", desc: "Dedicated lines and private networks", products: []*product{
					mainP(141, "Dedicated Internet Access 100M", "Guaranteed 100 Mbps symmetric", 49900, 29900, true),
					mainP(142, "Dedicated Internet Access 1G", "Guaranteed 1 Gbps symmetric", 99900, 89900, false),
					mainP(143, "MPLS VPN site", "Private network site with QoS", 29900, 24900, false),
					addon(144, "Managed firewall", "Next-generation firewall managed by our SOC", 19900, 9900, 141, 142, 143),
					addon(145, "DDoS protection", "Volumetric attack mitigation", 0, 14900, 141, 142),
					addon(146, "Firewall HA pair", "Second firewall in high availability", 19900, 7900, 144),
					addon(147, "24/7 NOC monitoring", "Proactive monitoring around the clock", 0, 4900, 141, 142, 143),
				}, packages: []*salesPackage{
					pkg("Enterprise Care", "Named engineer and quarterly network review", 9900),
				}},
			},
			discounts: []*discount{
				{ID: 11, Name: "Loyalty 8%", Percent: 8, AppliesTo: appliesRecurring},
				{ID: 12, Name: "Free installation", Percent: 100, AppliesTo: appliesActivation},
				{ID: 13, Name: "Multi-site 7.5%", Percent: 7.5, AppliesTo: appliesBoth},
				{ID: 19, Name: "Negotiated discount", AppliesTo: appliesBoth, Extra: true, MaxValue: 15},
			}},
		{id: 3, name: "Cloud & Collaboration", desc: "Productivity suites, cloud infrastructure and cloud telephony",
			tofs: []tofSeed{
				{id: 31, name: "Collaboration suites", desc: "E-mail, office apps and meetings", products: []*product{
					mainP(151, "Office Suite Business Standard", "Office apps, mail and 1 TB storage per user", 0, 1250, true),
					mainP(152, "Office Suite Business Premium", "Standard plus advanced security", 0, 2200, false),
					mainP(153, "Office Suite Basic", "Web apps, mail and 1 TB storage per user", 0, 600, false),
					addon(154, "Advanced e-mail archiving", "Ten-year searchable archive", 0, 300, 151, 152, 153),
					addon(155, "Extra storage 1TB", "Shared storage for the organisation", 0, 1000, 151, 152, 153),
					addon(156, "Video conferencing rooms", "Licence for a meeting room", 0, 1500, 151, 152),
					addon(157, "Room hardware kit", "Camera, speaker bar and touch console", 149900, 0, 156),
					addon(158, "Compliance pack", "Data loss prevention and e-discovery", 0, 800, 152),
				}, packages: []*salesPackage{
					pkg("Adoption Programme", "Onboarding webinars and admin training", 4900),
				}},
				{id: 32, name: "Cloud infrastructure", desc: "Virtual data centres in Italian regions", products: []*product{
					mainP(161, "Virtual Data Center S", "8 vCPU, 32 GB RAM, 1 TB SSD", 0, 29900, true),
					mainP(162, "Virtual Data Center M", "16 vCPU, 64 GB RAM, 2 TB SSD", 0, 54900, false),
					mainP(163, "Virtual Data Center L", "32 vCPU, 128 GB RAM, 4 TB SSD", 0, 99900, false),
					addon(164, "Backup as a Service", "Daily backups kept for 30 days", 0, 4900, 161, 162, 163),
					addon(165, "Disaster Recovery", "Replica in a second region, RPO 15 minutes", 49900, 19900, 161, 162, 163),
					addon(166, "Geo-redundant backup copy", "A second backup copy in another region", 0, 2500, 164),
					addon(167, "Managed OS patching", "Monthly patching of guest systems", 0, 3900, 161, 162, 163),
				}, packages: []*salesPackage{
					pkg("Cloud Governance", "Monthly cost and security report", 7900),
					pkg("Migration Assist", "Assisted migration of up to 20 virtual machines", 14900),
				}},
				{id: 33, name: "Cloud PBX", desc: "Hosted telephony for offices and contact centres", products: []*product{
					mainP(171, "Cloud PBX 10 users", "Hosted PBX with 10 extensions", 9900, 8900, true),
					mainP(172, "Cloud PBX 50 users", "Hosted PBX with 50 extensions", 19900, 34900, false),
					addon(173, "Call recording", "Recording with 12-month retention", 0, 1900, 171, 172),
					addon(174, "Contact centre module", "Queues, IVR and agent licences", 29900, 9900, 171, 172),
					addon(175, "Supervisor dashboard", "Live queue monitoring", 0, 2900, 174),
					addon(176, "Number portability", "Keep existing numbers", 4900, 0, 171, 172),
				}, packages: []*salesPackage{
					pkg("Voice Care", "Priority voice support and monthly call analytics", 2900),
				}},
			},
			discounts: []*discount{
				{ID: 21, Name: "Annual commitment 12%", Percent: 12, AppliesTo: appliesRecurring},
				{ID: 22, Name: "Onboarding 30%", Percent: 30, AppliesTo: appliesActivation},
				{ID: 23, Name: "Education and non-profit 20%", Percent: 20, AppliesTo: appliesBoth},
				{ID: 28, Name: "Migration incentive", AppliesTo: appliesActivation, Extra: true, MaxValue: 10},
				{ID: 29, Name: "Negotiated discount", AppliesTo: appliesBoth, Extra: true, MaxValue: 20},
			}},
		{id: 4, name: "Energy for Business", desc: "Electricity and gas supply with energy services",
			tofs: []tofSeed{
				{id: 41, name: "Electricity", desc: "Electricity supply for business sites", products: []*product{
					mainP(181, "Green Power Fixed 24m", "Renewable electricity, fixed price for 24 months", 0, 18900, true),
					mainP(182, "Power Indexed PUN", "Price indexed to the national single price", 0, 15900, false),
					mainP(183, "Power Fixed 12m", "Fixed price for 12 months", 0, 17900, false),
					addon(184, "Smart meter monitoring", "Quarter-hour consumption dashboard", 4900, 900, 181, 182, 183),
					addon(185, "Demand peak alerts", "Alerts when demand nears the contracted power", 0, 400, 184),
					addon(186, "Power factor correction audit", "On-site audit of reactive power", 29900, 0, 181, 182, 183),
					addon(187, "Carbon offset certificate", "Certified offset of residual emissions", 0, 1500, 182, 183),
				}, packages: []*salesPackage{
					pkg("Energy Efficiency Review", "Yearly efficiency review with savings plan", 3900),
				}},
				{id: 42, name: "Gas", desc: "Natural gas supply for business sites", products: []*product{
					mainP(191, "Gas Fixed 24m", "Natural gas, fixed price for 24 months", 0, 9900, true),
					mainP(192, "Gas Indexed PSV", "Price indexed to the virtual trading point", 0, 8900, false),
					addon(193, "Boiler maintenance", "Yearly boiler service", 0, 1200, 191, 192),
					addon(194, "Emergency repair cover", "Repair within 24 hours", 0, 900, 193),
					addon(195, "Consumption report", "Monthly consumption and cost report", 0, 300, 191, 192),
				}, packages: []*salesPackage{
					pkg("Heating Care", "Seasonal heating check and remote monitoring", 2500),
				}},
			},
			discounts: []*discount{
				{ID: 31, Name: "Green bonus 4%", Percent: 4, AppliesTo: appliesRecurring},
				{ID: 32, Name: "Connection fee waiver", Percent: 100, AppliesTo: appliesActivation},
				{ID: 33, Name: "Multi-site 3%", Percent: 3, AppliesTo: appliesBoth},
				{ID: 39, Name: "Negotiated discount", AppliesTo: appliesRecurring, Extra: true, MaxValue: 10},
			}},
	}

	c := &catalog{
		cpqByID:   map[int32]*configurator{},
		tofs:      map[int32]*tof{},
		products:  map[int32]*product{},
		discounts: map[int32]*discount{},
		packages:  map[int32]*salesPackage{},
		pricelists: []pricelist{
			{ID: pricelistStandard, Name: "Standard 2026"},
			{ID: pricelistPartner, Name: "Partner 2026"},
		},
		ownerByID:    map[int64]owner{},
		ownerByLogin: map[string]int64{},
	}
	nextPackageID := int32(31)
	for _, cs := range seeds {
		cfg := &configurator{ID: cs.id, Name: cs.name, Description: cs.desc}
		for _, ts := range cs.tofs {
			t := &tof{ID: ts.id, CPQID: cs.id, Name: ts.name, Description: ts.desc}
			for i, p := range ts.products {
				p.TOFID = ts.id
				p.TOFProductID = ts.id*100 + int32(i+1)
				t.Products = append(t.Products, p)
				c.products[p.ProductID] = p
			}
			for _, sp := range ts.packages {
				sp.ID = nextPackageID
				sp.TOFID = ts.id
				nextPackageID++
				t.Packages = append(t.Packages, sp)
				c.packages[sp.ID] = sp
			}
			cfg.TOFs = append(cfg.TOFs, t)
			c.tofs[t.ID] = t
		}
		for _, d := range cs.discounts {
			d.CPQID = cs.id
			cfg.Discounts = append(cfg.Discounts, d)
			c.discounts[d.ID] = d
		}
		c.configurators = append(c.configurators, cfg)
		c.cpqByID[cfg.ID] = cfg
	}
	// The demo's users (internal/demoidp) are owners too: the team lead "teamlead" is Giulia Bianchi (1001),
	// "sales" is Sam Sales (1010), with the e-mail addresses the demo provider gives them (so the
	// portal knows which owner a person is, customer_detail.go ownerOf); the others sign in as
	// their e-mail's local part.
	owners := []struct{ name, email, login string }{
		{"Giulia Bianchi", "giulia.bianchi@demo.example", "teamlead"},
		{"Marco Rossi", "marco.rossi@sales.example.com", ""},
		{"Sofia Esposito", "sofia.esposito@sales.example.com", ""},
		{"Luca Ferrari", "luca.ferrari@sales.example.com", ""},
		{"Chiara Romano", "chiara.romano@sales.example.com", ""},
		{"Matteo Colombo", "matteo.colombo@sales.example.com", ""},
		{"Anna Weber", "anna.weber@sales.example.com", ""},
		{"Julien Moreau", "julien.moreau@sales.example.com", ""},
		{"Lucía García", "lucia.garcia@sales.example.com", ""},
		{"Sam Sales", "sam.sales@demo.example", "sales"},
	}
	for i, o := range owners {
		login := o.login
		if login == "" {
			login, _, _ = strings.Cut(o.email, "@")
		}
		ow := owner{ID: int64(1001 + i), Name: o.name, Email: o.email, Login: login}
		c.owners = append(c.owners, ow)
		c.ownerByID[ow.ID] = ow
		c.ownerByLogin[ow.Login] = ow.ID
	}
	return c
}
