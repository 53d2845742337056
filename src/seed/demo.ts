import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { eq, inArray, isNotNull } from 'drizzle-orm'
import sharp from 'sharp'
import type { Db } from '../db/client.ts'
import type { Clock } from '../lib/clock.ts'
import { DAY } from '../lib/clock.ts'
import { hashPassword } from '../lib/passwords.ts'
import { categories } from '../modules/catalogue/categories.table.ts'
import type { OfferExtra, OfferPackage, ServiceFields } from '../modules/catalogue/catalogue.module.ts'
import { services as servicesTable } from '../modules/catalogue/services.table.ts'
import type { Actor } from '../access/access.ts'
import type { Container } from '../container.ts'

/** Every demo account ends in this domain, so demo data is easy to recognise (and to delete). */
export const DEMO_EMAIL_DOMAIN = 'demo.marketplace.test'
/** The password of every demo account, so a newcomer can log in as a seller. */
export const DEMO_PASSWORD = 'DemoSeller123'

export interface DemoSeedDeps {
  db: Db
  clock: Clock
  container: Pick<Container, 'users' | 'catalogue'>
  /** Where the generated images are staged before the uploads service stores them. */
  tmpDir: string
}

export interface DemoSeedResult {
  usersCreated: number
  avatarsCreated: number
  servicesCreated: number
}

const SELLERS: { fullName: string; title: string; description: string }[] = [
  { fullName: 'Amelia Hart', title: 'Brand designer', description: 'Ten years of logos and identities for start-ups and family businesses.' },
  { fullName: 'Daniel Okafor', title: 'Full-stack developer', description: 'TypeScript, React and PostgreSQL. I ship small web apps quickly and cleanly.' },
  { fullName: 'Sofia Marino', title: 'Illustrator', description: 'Children’s books, characters and editorial illustration in watercolour and vector.' },
  { fullName: 'Lucas Bernard', title: 'UX designer', description: 'User research, wireframes and Figma prototypes that developers love to build.' },
  { fullName: 'Priya Natarajan', title: 'Mobile developer', description: 'Native iOS and Android apps, and cross-platform with Flutter.' },
  { fullName: 'Tomás Herrera', title: 'DevOps engineer', description: 'Docker, Kubernetes, CI pipelines and cloud bills that stop growing.' },
  { fullName: 'Hannah Schmidt', title: 'SEO consultant', description: 'Technical audits, keyword research and content plans that rank.' },
  { fullName: 'Kenji Watanabe', title: 'Performance marketer', description: 'Google and Meta campaigns measured to the last conversion.' },
  { fullName: 'Chloé Dubois', title: 'Copywriter', description: 'Landing pages, newsletters and product copy with a clear voice.' },
  { fullName: 'Mateo Rossi', title: 'Translator (EN, IT, ES)', description: 'Native Italian and Spanish translations of websites, apps and contracts.' },
  { fullName: 'Grace Mensah', title: 'Editor and proofreader', description: 'Careful proofreading of books, theses and business documents.' },
  { fullName: 'Oliver Nowak', title: 'Video editor', description: 'YouTube videos, reels and corporate films edited with pace and polish.' },
  { fullName: 'Aisha Rahman', title: 'Motion designer', description: 'Explainer videos and motion graphics in After Effects.' },
  { fullName: 'Ethan Walker', title: 'Voice actor', description: 'Warm, neutral American voice for ads, e-learning and audiobooks.' },
  { fullName: 'Lena Johansson', title: 'Music producer', description: 'Mixing, mastering and original tracks for artists and brands.' },
  { fullName: 'Carlos Mendes', title: 'Podcast producer', description: 'Editing, sound design and show notes for weekly podcasts.' },
  { fullName: 'Nora Lindqvist', title: 'Virtual assistant', description: 'Inbox, calendar, research and data entry, done reliably.' },
  { fullName: 'Samuel Adeyemi', title: 'Business consultant', description: 'Business plans, financial models and market research for founders.' },
  { fullName: 'Mei Chen', title: 'Machine learning engineer', description: 'Chatbots, RAG applications and data science with Python.' },
  { fullName: 'Ravi Kapoor', title: 'AI automation specialist', description: 'Prompt engineering and AI workflows that save hours every week.' },
]

/** Two offers per subcategory slug: [title, short description, tags]. */
const OFFERS: Record<string, [string, string, string[]][]> = {
  'logo-design': [
    ['I will design a modern minimalist logo', 'A clean, memorable logo with unlimited concepts.', ['logo', 'branding', 'minimalist']],
    ['I will create a mascot logo for your brand', 'A friendly character logo, drawn from scratch.', ['logo', 'mascot', 'illustration']],
  ],
  'brand-style-guides': [
    ['I will create a complete brand style guide', 'Colours, typography and usage rules in one PDF.', ['branding', 'style guide', 'identity']],
    ['I will design your brand identity kit', 'Logo variations, palette and social templates.', ['branding', 'identity', 'logo']],
  ],
  illustration: [
    ['I will illustrate your children’s book', 'Warm watercolour illustrations, print ready.', ['illustration', 'children book', 'watercolor']],
    ['I will draw a custom vector portrait', 'Flat vector portraits for avatars and teams.', ['illustration', 'portrait', 'vector']],
  ],
  'ui-ux-design': [
    ['I will design a mobile app UI in Figma', 'Modern screens with a clickable prototype.', ['ui', 'ux', 'figma', 'mobile app']],
    ['I will design a landing page that converts', 'A responsive landing page design with copy hints.', ['ui', 'landing page', 'web design']],
  ],
  'social-media-design': [
    ['I will design Instagram posts and stories', 'A month of on-brand posts in editable Canva.', ['instagram', 'social media', 'canva']],
    ['I will design YouTube thumbnails that get clicks', 'Bold thumbnails tested for click-through.', ['youtube', 'thumbnail', 'design']],
  ],
  'website-development': [
    ['I will build a responsive WordPress website', 'A fast, editable WordPress site with SEO basics.', ['wordpress', 'website', 'responsive']],
    ['I will develop a Next.js web application', 'A React and Next.js app with an API and database.', ['nextjs', 'react', 'typescript']],
  ],
  'mobile-apps': [
    ['I will develop a Flutter app for iOS and Android', 'One codebase, two stores, published for you.', ['flutter', 'ios', 'android']],
    ['I will fix bugs in your React Native app', 'Crashes, builds and performance problems solved.', ['react native', 'mobile app', 'bug fix']],
  ],
  'desktop-applications': [
    ['I will build a cross-platform Electron desktop app', 'Windows, macOS and Linux from one codebase.', ['electron', 'desktop', 'typescript']],
    ['I will automate Excel with a Python desktop tool', 'A small GUI tool that does your spreadsheet work.', ['python', 'automation', 'excel']],
  ],
  'devops-cloud': [
    ['I will set up Docker and CI/CD for your project', 'Containers, GitHub Actions and one-click deploys.', ['docker', 'ci', 'devops']],
    ['I will deploy your app to AWS with Terraform', 'Infrastructure as code, monitored and documented.', ['aws', 'terraform', 'cloud']],
  ],
  'bug-fixes-support': [
    ['I will fix bugs in your JavaScript or PHP website', 'Quick fixes for errors, layouts and forms.', ['bug fix', 'javascript', 'php']],
    ['I will speed up your slow website', 'Core Web Vitals improved, measured before and after.', ['performance', 'website', 'speed']],
  ],
  seo: [
    ['I will do a technical SEO audit of your website', 'A prioritised list of fixes with clear instructions.', ['seo', 'audit', 'google']],
    ['I will do keyword research and a content plan', 'Keywords you can rank for, grouped into articles.', ['seo', 'keywords', 'content']],
  ],
  'social-media-marketing': [
    ['I will manage your Instagram and grow followers', 'Daily posting, engagement and monthly reports.', ['instagram', 'social media', 'marketing']],
    ['I will create a TikTok marketing strategy', 'Content pillars, hooks and a posting calendar.', ['tiktok', 'strategy', 'marketing']],
  ],
  'paid-advertising': [
    ['I will set up and manage your Google Ads campaigns', 'Search and shopping campaigns that pay for themselves.', ['google ads', 'ppc', 'advertising']],
    ['I will run Facebook and Instagram ads', 'Audiences, creatives and pixel tracking set up.', ['facebook ads', 'meta', 'advertising']],
  ],
  'email-marketing': [
    ['I will design a Mailchimp email newsletter', 'A responsive template and your first campaign.', ['email', 'mailchimp', 'newsletter']],
    ['I will write an email welcome sequence', 'Five emails that turn subscribers into customers.', ['email', 'copywriting', 'automation']],
  ],
  'articles-blog-posts': [
    ['I will write SEO blog posts for your website', 'Researched, original articles that rank.', ['blog', 'seo', 'writing']],
    ['I will write technical articles about software', 'Clear tutorials and explainers for developers.', ['technical writing', 'blog', 'software']],
  ],
  copywriting: [
    ['I will write landing page copy that sells', 'Headlines and sections built on customer research.', ['copywriting', 'landing page', 'sales']],
    ['I will write product descriptions for your store', 'Descriptions that answer questions and sell.', ['copywriting', 'ecommerce', 'product']],
  ],
  translation: [
    ['I will translate English to Spanish', 'Natural, native Spanish for websites and documents.', ['translation', 'spanish', 'english']],
    ['I will translate English to Italian', 'Careful Italian translation with a second review.', ['translation', 'italian', 'english']],
  ],
  'proofreading-editing': [
    ['I will proofread and edit your book', 'Grammar, style and consistency, tracked in Word.', ['proofreading', 'editing', 'book']],
    ['I will proofread your thesis or academic paper', 'Academic English polished, references checked.', ['proofreading', 'academic', 'thesis']],
  ],
  'video-editing': [
    ['I will edit your YouTube videos', 'Cuts, captions, music and colour for your channel.', ['video editing', 'youtube', 'premiere']],
    ['I will edit a corporate or event video', 'A polished film from your raw footage.', ['video editing', 'corporate', 'event']],
  ],
  'animated-explainers': [
    ['I will create a 2D animated explainer video', 'Script, voice and animation for your product.', ['explainer', 'animation', '2d']],
    ['I will make a whiteboard animation video', 'Hand-drawn style animation that explains anything.', ['whiteboard', 'animation', 'explainer']],
  ],
  'motion-graphics': [
    ['I will animate your logo', 'A smooth logo reveal for intros and ads.', ['logo animation', 'motion graphics', 'intro']],
    ['I will create motion graphics for social media', 'Animated posts and lower thirds in After Effects.', ['motion graphics', 'after effects', 'social media']],
  ],
  'short-video-ads': [
    ['I will create short video ads for TikTok and Reels', 'Vertical ads with hooks that stop the scroll.', ['video ads', 'tiktok', 'reels']],
    ['I will make a product video for your online store', 'A short product video from your photos and clips.', ['video ads', 'ecommerce', 'product video']],
  ],
  'voice-over': [
    ['I will record a warm American male voice over', 'Studio quality voice for ads and e-learning.', ['voice over', 'american', 'male voice']],
    ['I will narrate your audiobook', 'Natural narration, edited and mastered to ACX.', ['voice over', 'audiobook', 'narration']],
  ],
  'mixing-mastering': [
    ['I will mix and master your song', 'A radio-ready mix with two rounds of changes.', ['mixing', 'mastering', 'music']],
    ['I will master your album for streaming', 'Loud, clear masters for Spotify and Apple Music.', ['mastering', 'album', 'streaming']],
  ],
  'music-production': [
    ['I will produce an original beat for your track', 'Hip hop, pop or lo-fi beats with stems.', ['music production', 'beat', 'hip hop']],
    ['I will compose music for your video or game', 'Royalty-free original music that fits the mood.', ['composer', 'music', 'soundtrack']],
  ],
  'podcast-editing': [
    ['I will edit your podcast episode', 'Noise removed, pauses tightened, levels matched.', ['podcast', 'audio editing', 'editing']],
    ['I will launch your podcast on every platform', 'Artwork, intro music and distribution set up.', ['podcast', 'launch', 'audio']],
  ],
  'virtual-assistant': [
    ['I will be your virtual assistant for admin tasks', 'Email, calendar and research handled daily.', ['virtual assistant', 'admin', 'data entry']],
    ['I will do accurate data entry and web research', 'Spreadsheets filled and checked twice.', ['data entry', 'excel', 'research']],
  ],
  'business-plans': [
    ['I will write an investor-ready business plan', 'A plan with market analysis and a financial model.', ['business plan', 'startup', 'investors']],
    ['I will create a pitch deck for your startup', 'A clear story and design for your fundraise.', ['pitch deck', 'startup', 'presentation']],
  ],
  'market-research': [
    ['I will do market research and competitor analysis', 'Size, competitors and opportunities in one report.', ['market research', 'competitors', 'analysis']],
    ['I will run customer surveys and analyse the results', 'Survey design, collection and clear findings.', ['survey', 'research', 'customers']],
  ],
  'financial-consulting': [
    ['I will build a financial model in Excel', 'A three-statement model with scenarios.', ['financial model', 'excel', 'finance']],
    ['I will do bookkeeping in QuickBooks or Xero', 'Monthly books reconciled and reported.', ['bookkeeping', 'quickbooks', 'xero']],
  ],
  'ai-chatbots': [
    ['I will build an AI chatbot for your website', 'A GPT chatbot trained on your documents.', ['chatbot', 'ai', 'gpt']],
    ['I will create a WhatsApp AI assistant', 'Customer support on WhatsApp, answered by AI.', ['chatbot', 'whatsapp', 'ai']],
  ],
  'ai-applications': [
    ['I will develop a custom AI web application', 'A RAG or agent app with a clean interface.', ['ai', 'rag', 'web app']],
    ['I will integrate the OpenAI API into your app', 'Summaries, search and assistants in your product.', ['openai', 'api', 'integration']],
  ],
  'data-science-ml': [
    ['I will do data analysis and visualisation in Python', 'Clean data, clear charts and a written summary.', ['data analysis', 'python', 'pandas']],
    ['I will train a machine learning model on your data', 'A tested model with a small prediction API.', ['machine learning', 'python', 'model']],
  ],
  'prompt-engineering': [
    ['I will write prompts for ChatGPT and Midjourney', 'Prompt libraries tuned for your use case.', ['prompt engineering', 'chatgpt', 'midjourney']],
    ['I will automate your workflow with AI and Zapier', 'AI steps wired into the tools you already use.', ['automation', 'zapier', 'ai']],
  ],
}

const SERVICE_COUNT = 60
const PALETTE = ['#1d4ed8', '#047857', '#b45309', '#7c3aed', '#be123c', '#0e7490', '#4d7c0f', '#c2410c', '#334155', '#a21caf']

const emailOf = (index: number) => `seller${String(index + 1).padStart(2, '0')}@${DEMO_EMAIL_DOMAIN}`
const actorOf = (user: { id: string; email: string; fullName: string }): Actor => ({ ...user, isStaff: false, isSuperuser: false, permissions: new Set() })

/** A deterministic pseudo-random number in [0, 1) for a seed: the same data on every run. */
const noise = (seed: number) => {
  const x = Math.sin(seed * 12.9898) * 43_758.5453
  return x - Math.floor(x)
}

/** A small abstract PNG (no text: rendering fonts depends on the host). */
async function writeImage(path: string, width: number, height: number, seed: number): Promise<void> {
  const [a, b] = [PALETTE[seed % PALETTE.length]!, PALETTE[(seed * 7 + 3) % PALETTE.length]!]
  const circles = Array.from({ length: 4 }, (_, index) => {
    const cx = Math.round(noise(seed * 10 + index) * width)
    const cy = Math.round(noise(seed * 10 + index + 5) * height)
    const r = Math.round((0.15 + noise(seed * 10 + index + 9) * 0.25) * Math.min(width, height))
    return `<circle cx="${cx}" cy="${cy}" r="${r}" fill="#ffffff" fill-opacity="${(0.12 + index * 0.06).toFixed(2)}"/>`
  }).join('')
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="${a}"/><stop offset="1" stop-color="${b}"/></linearGradient></defs><rect width="100%" height="100%" fill="url(#g)"/>${circles}</svg>`
  await sharp(Buffer.from(svg)).png({ compressionLevel: 9 }).toFile(path)
}

/** The `variant`th offer of a subcategory, priced and shaped by `index` (1 to 3 packages, 0 to 2 extras). */
function offerFor(index: number, variant: number, subcategory: { id: string; slug: string; name: string }): ServiceFields {
  const offers = OFFERS[subcategory.slug]
  const [title, shortDescription, tags] = offers?.[variant % offers.length] ?? [
    `I will help you with ${subcategory.name.toLowerCase()}`,
    `Professional ${subcategory.name.toLowerCase()} delivered on time.`,
    [subcategory.slug.replace(/-/g, ' ')],
  ]
  const base = 5 + Math.round(noise(index + 1) * 19) * 5 // 5.00 to 100.00
  const tiers: OfferPackage[] = [
    { name: 'Basic', description: 'The essentials, done well.', price: base, deliveryDays: 2 + (index % 3), revisions: 1, features: ['1 concept', 'Source files'] },
    { name: 'Standard', description: 'The most popular choice.', price: base * 2, deliveryDays: 4 + (index % 4), revisions: 3, features: ['3 concepts', 'Source files', 'Priority support'] },
    { name: 'Premium', description: 'Everything, with unlimited changes.', price: base * 4, deliveryDays: 7 + (index % 7), revisions: 'unlimited', features: ['5 concepts', 'Source files', 'Priority support', 'Commercial licence'] },
  ]
  const extras: OfferExtra[] = [
    { title: 'Extra-fast delivery', price: Math.max(5, Math.round(base / 2)), additionalDays: 0 },
    { title: 'Additional revision', price: 10, additionalDays: 1 },
  ]
  return {
    title,
    shortDescription,
    description: `${shortDescription} Tell me about your project and goals, and I will reply within a few hours with questions and a plan. Every order includes clear communication, on-time delivery and a final review together.`,
    categoryId: subcategory.id,
    tags,
    packages: tiers.slice(0, 1 + (index % 3)),
    extras: extras.slice(0, index % 3),
  }
}

/**
 * Fills the database with a believable marketplace: sellers with profiles and avatars, and
 * active services with packages, extras, tags, banners and ratings in every subcategory.
 * Idempotent: accounts are found by e-mail and services by seller and title, so a second run
 * (or a run after an interrupted one) only adds what is missing.
 */
export async function seedDemo(deps: DemoSeedDeps): Promise<DemoSeedResult> {
  const { db, clock, container } = deps
  const result: DemoSeedResult = { usersCreated: 0, avatarsCreated: 0, servicesCreated: 0 }
  const subcategories = await db
    .select({ id: categories.id, slug: categories.slug, name: categories.name })
    .from(categories)
    .where(isNotNull(categories.parentId))
    .orderBy(categories.parentId, categories.position)
  if (subcategories.length === 0) throw new Error('no subcategories: run the migrations first')

  await mkdir(deps.tmpDir, { recursive: true })
  const stagingDir = await mkdtemp(join(deps.tmpDir, 'seed-'))
  try {
    // One hash for every demo account: argon2 is slow on purpose.
    let passwordHash: string | undefined
    const sellers: Actor[] = []
    for (const [index, profile] of SELLERS.entries()) {
      const email = emailOf(index)
      let account = await container.users.findAccountByEmail(db, email)
      if (!account) {
        passwordHash ??= await hashPassword(DEMO_PASSWORD)
        const hash = passwordHash
        account = await db.transaction((tx) => container.users.createAccount(tx, { email, fullName: profile.fullName, passwordHash: hash, isActive: true }))
        await container.users.updateProfile(actorOf(account), { title: profile.title, description: profile.description })
        result.usersCreated++
      }
      const actor = actorOf(account)
      if (!(await container.users.avatarsOf(db, [account.id])).has(account.id)) {
        const path = join(stagingDir, `avatar-${index}.png`)
        await writeImage(path, 256, 256, index)
        await container.users.setAvatar(actor, { path, filename: `${profile.fullName.split(' ')[0]!.toLowerCase()}.png`, size: (await stat(path)).size })
        result.avatarsCreated++
      }
      sellers.push(actor)
    }

    const existing = await db
      .select({ sellerId: servicesTable.sellerId, title: servicesTable.title })
      .from(servicesTable)
      .where(inArray(servicesTable.sellerId, sellers.map((seller) => seller.id)))
    const taken = new Set(existing.map((row) => `${row.sellerId} ${row.title}`))

    for (let index = 0; index < SERVICE_COUNT; index++) {
      // Every subcategory first, then a second offer in the first ones.
      const subcategory = subcategories[index % subcategories.length]!
      const seller = sellers[index % sellers.length]!
      const fields = offerFor(index, Math.floor(index / subcategories.length), subcategory)
      if (taken.has(`${seller.id} ${fields.title}`)) continue

      const created = await container.catalogue.createService(seller, fields)
      const path = join(stagingDir, `banner-${index}.png`)
      await writeImage(path, 800, 450, index + 100)
      await container.catalogue.setBanner(seller, created.id, { path, filename: 'banner.png', size: (await stat(path)).size })
      // Demo services skip the review queue; two thirds have been rated, and dates spread over 90 days.
      const isRated = index % 3 !== 0
      await db
        .update(servicesTable)
        .set({
          status: 'active',
          ratingAverage: isRated ? Math.round((3.6 + noise(index + 50) * 1.4) * 10) / 10 : 0,
          ratingCount: isRated ? 1 + Math.floor(noise(index + 70) * 120) : 0,
          ordersCount: isRated ? 2 + Math.floor(noise(index + 90) * 200) : 0,
          createdAt: new Date(clock.now().getTime() - Math.floor(noise(index + 30) * 90 * DAY)),
        })
        .where(eq(servicesTable.id, created.id))
      result.servicesCreated++
    }
  } finally {
    await rm(stagingDir, { recursive: true, force: true })
  }
  return result
}
