#!/usr/bin/env python3
"""Train a tiny CNN and save its state dict to outputs/model.pth."""
import argparse
from pathlib import Path

import torch
from torch import nn
from torchvision import datasets, transforms

ap = argparse.ArgumentParser()
ap.add_argument("folder")
ap.add_argument("--epochs", type=int, default=5)
a = ap.parse_args()
tf = transforms.Compose([transforms.Resize((64, 64)), transforms.ToTensor()])
ds = datasets.ImageFolder(a.folder, transform=tf)
dl = torch.utils.data.DataLoader(ds, batch_size=32, shuffle=True)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
    nn.Flatten(), nn.Linear(32 * 16 * 16, len(ds.classes)))
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(a.epochs):
    total = 0.0
    for x, y in dl:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item()
    print(f"epoch {epoch + 1}: loss {total / len(dl):.3f}")
out = Path("outputs")
out.mkdir(exist_ok=True)
torch.save(model.state_dict(), out / "model.pth")
conf = torch.zeros(len(ds.classes), len(ds.classes), dtype=torch.long)
with torch.no_grad():
    for x, y in dl:
        for t, p in zip(y, model(x).argmax(1)):
            conf[t, p] += 1
(out / "confusion.csv").write_text("\n".join(",".join(map(str, r.tolist())) for r in conf) + "\n")
